import { parse, protocol, type PGlite, type QueryOptions, type Results, type Transaction } from "@electric-sql/pglite";
import type { PGlite as KyselyPGlite, PostgresCursor, PostgresPool, PostgresPoolClient, PostgresQueryResult } from "kysely";
import pg from "pg";

/** The most statements one connection (or the embedded database) keeps prepared, and the most parameters a prepared one takes. */
const PREPARED_PER_CONNECTION = 200;
const PREPARED_MAX_PARAMETERS = 64;
/** A list whose length is the input's: `in ($1, $2, ...)`, or the rows of `values (...), (...)`. */
const VALUE_LIST = /\bin \(\$\d+, |\), \(/;

/**
 * Whether a statement not yet prepared gets a name, when `prepared` names are
 * taken: while there is room, and only a statement whose text repeats; one
 * whose text changes with its input (a batch's, with many parameters, or a
 * list, see `VALUE_LIST`) is planned at each run.
 */
const worthPreparing = (text: string, parameters: number, prepared: number): boolean =>
  prepared < PREPARED_PER_CONNECTION && parameters <= PREPARED_MAX_PARAMETERS && !VALUE_LIST.test(text);

/**
 * Statements and transactions this process ran again after PostgreSQL refused
 * them, by why (a deadlock, a serialization failure, a plan a migration made
 * stale, a lock or statement timeout, a lock order conflict): reported at /metrics. A steady count of deadlocks means two writers
 * take the same rows in different orders.
 */
export const retries = { deadlock: 0, serialization: 0, stale_plan: 0, timeout: 0, lock_order: 0 };

/** What a connection has prepared: each statement's name by its text, and whether a transaction is open on it. */
type Prepared = { names: Map<string, string>; next: number; inTransaction: boolean };

/**
 * Has PostgreSQL plan each statement the service repeats once per connection
 * (a named prepared statement, through `pg`'s own query config `{ name, text,
 * values }`) instead of at every run: planning is most of the cost of a push's
 * statement. Only statements whose text repeats get a name (see
 * `worthPreparing`); the others are planned each time.
 *
 * The pool kysely is given (its `PostgresPool` interface): each connection it
 * takes is the pool's own, seen through a `PostgresPoolClient` that names the
 * statements; nothing of `pg` is changed, and other users of the pool (the
 * rate limiter, LISTEN) query it as they always do.
 *
 * A statement whose tables changed shape under it (a migration by a newer
 * process) is prepared anew at its next run. Outside a transaction, the run
 * that found it stale is retried here at once; inside one, the transaction
 * failed with it and is retried whole by `inTransaction`.
 */
export function preparingPool(pool: pg.Pool): PostgresPool {
  // One view per connection, kept as long as the connection: kysely keeps its own state per client it is given.
  const views = new WeakMap<pg.PoolClient, PostgresPoolClient>();
  return {
    Client: pg.Client,
    options: pool.options,
    async connect() {
      const client = await pool.connect();
      let view = views.get(client);
      if (!view) views.set(client, (view = preparingClient(client, { names: new Map(), next: 0, inTransaction: false })));
      return view;
    },
    end: () => pool.end(),
  };
}

function preparingClient(client: pg.PoolClient, state: Prepared): PostgresPoolClient {
  /**
   * A statement whose answer did not come in time (the client's read timeout:
   * a frozen or unreachable server) leaves the connection in a state the
   * client no longer knows: the statement may still run, a transaction may
   * still be open on it. Such a connection is closed, so that no later
   * request runs its statements on it; the pool replaces it.
   */
  const closingOnReadTimeout = <T>(result: Promise<T>): Promise<T> =>
    result.catch((error: unknown) => {
      if (error instanceof Error && /Query read timeout/i.test(error.message)) void client.end().catch(() => {});
      throw error;
    });
  /** The statement's name: known, or new when there is room and its text repeats (see above). */
  const nameOf = (text: string, values: readonly unknown[]): string | undefined => {
    let name = state.names.get(text);
    if (!name && worthPreparing(text, values.length, state.names.size)) {
      name = `ingest_${state.next++}`;
      state.names.set(text, name);
    }
    return name;
  };
  // pg's result says its command as any string; kysely reads only the ones it knows.
  const run = <R>(config: pg.QueryConfig) => closingOnReadTimeout(client.query(config)) as unknown as Promise<PostgresQueryResult<R>>;

  function query<R>(text: string, parameters: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>>;
  function query<R>(cursor: PostgresCursor<R>): PostgresCursor<R>;
  function query<R>(textOrCursor: string | PostgresCursor<R>, parameters: ReadonlyArray<unknown> = []): Promise<PostgresQueryResult<R>> | PostgresCursor<R> {
    if (typeof textOrCursor !== "string") return client.query(textOrCursor as never);
    const text = textOrCursor;
    const values = parameters as unknown[];
    // Transaction control takes no parameters.
    if (values.length === 0 && TRANSACTION_CONTROL.test(text)) state.inTransaction = !TRANSACTION_END.test(text);
    const name = values.length > 0 ? nameOf(text, values) : undefined;
    if (!name) return run<R>({ text, values });
    return run<R>({ name, text, values }).catch((error: unknown) => {
      if (!isStalePlan(error)) throw error;
      state.names.delete(text);
      if (state.inTransaction) throw error;
      retries.stale_plan++;
      return run<R>({ name: nameOf(text, values) ?? name, text, values });
    });
  }

  return {
    query,
    release: (destroy?: boolean) => client.release(destroy),
    get processID() {
      return (client as { processID?: number }).processID;
    },
  };
}

const TRANSACTION_CONTROL = /^\s*(begin|start transaction|commit|end|rollback|abort)\b(?!\s+((work|transaction)\s+)?to\b)/i;
/** Ends the transaction, unless it chains a new one. */
const TRANSACTION_END = /^\s*(commit|end|rollback|abort)\b(?![^;]*\band\s+chain\b)/i;

/**
 * PostgreSQL refuses a prepared statement whose result's shape changed since
 * it was planned. Known by the function that refuses it, which does not
 * depend on the server's language, or else by its English message.
 */
export const isStalePlan = (error: unknown): boolean =>
  error instanceof Error &&
  "code" in error &&
  error.code === "0A000" &&
  (("routine" in error && error.routine === "RevalidateCachedQuery") || /cached plan must not change result type/.test(error.message));


/**
 * Has PGlite plan each statement the service repeats once, as the PostgreSQL
 * connections do (see `preparingPool`): PGlite's own `query` parses and plans
 * every statement it runs, which is most of a push's cost there. A repeated
 * statement is parsed and described once under a name; each run then binds and
 * executes it, in one exchange with the engine (PGlite's public
 * `execProtocolStream`, under its public `runExclusive`). Everything else goes
 * through PGlite's own `query`.
 *
 * The database kysely is given (its `PGlite` interface), wrapping the real one
 * without changing it. Kysely runs one query or one transaction at a time on
 * it, and every transaction on the embedded database is kysely's, so a
 * statement run here outside a transaction never lands inside another's.
 */
export function preparingPGlite(pglite: PGlite): KyselyPGlite {
  const names = new Map<string, { name: string; types: number[] }>();
  let next = 0;
  const exchange = (message: Uint8Array) => pglite.execProtocolStream(message, { syncToFs: false });

  /** A statement worth preparing: repeated text, and room for it (or already prepared). */
  const preparable = (text: string, params: unknown[] | undefined, options: QueryOptions | undefined): params is unknown[] =>
    Array.isArray(params) &&
    params.length > 0 &&
    options?.blob === undefined &&
    (names.has(text) || worthPreparing(text, params.length, names.size));

  /** Runs a repeated statement, preparing it the first time, alone on the engine. */
  const runPrepared = <T>(text: string, params: unknown[], options: QueryOptions | undefined): Promise<Results<T>> =>
    pglite.runExclusive(async () => {
      let statement = names.get(text);
      if (!statement) {
        const name = `ingest_${next++}`;
        const described = await exchange(concat(protocol.serialize.parse({ name, text }), protocol.serialize.describe({ type: "S", name }), protocol.serialize.sync()));
        statement = { name, types: parse.parseDescribeStatementResults(described) };
        names.set(text, statement);
      }
      const { name, types } = statement;
      const values = params.map((value, index) => {
        if (value === null || value === undefined) return null;
        const type = types[index] ?? 0;
        const serializer = options?.serializers?.[type] ?? pglite.serializers[type];
        if (serializer) return serializer(value);
        // As PGlite's own query does for a type without a serializer.
        return (value as { toString(): string }).toString();
      });
      try {
        const messages = await exchange(
          concat(protocol.serialize.bind({ statement: name, values }), protocol.serialize.describe({ type: "P" }), protocol.serialize.execute({}), protocol.serialize.sync()),
        );
        return parse.parseResults(messages, pglite.parsers, options)[0] as Results<T>;
      } catch (error) {
        // A plan a migration made stale is prepared anew at the next run.
        if (isStalePlan(error)) names.delete(text);
        throw error;
      }
    });

  /** As PGlite's own query refuses on a database closing or closed: with its own words, which mean "unavailable". */
  const open = () => {
    if (pglite.closed) throw new Error("PGlite is closed");
  };

  return {
    get closed() {
      return pglite.closed;
    },
    get ready() {
      return pglite.ready;
    },
    get waitReady() {
      return pglite.waitReady;
    },
    close: () => pglite.close(),
    async query<T>(text: string, params?: unknown[], options?: QueryOptions): Promise<Results<T>> {
      if (!preparable(text, params, options)) return pglite.query<T>(text, params, options);
      await pglite.waitReady;
      open();
      // Outside a transaction, a run that found its plan stale is run again at once (prepared anew).
      const result = await runPrepared<T>(text, params, options).catch((error: unknown) => {
        if (!isStalePlan(error)) throw error;
        retries.stale_plan++;
        return runPrepared<T>(text, params, options);
      });
      await pglite.syncToFs();
      return result;
    },
    transaction: <T>(callback: (tx: Transaction) => Promise<T>) =>
      pglite.transaction((tx) =>
        callback({
          ...tx,
          rollback: () => tx.rollback(),
          query: <R>(text: string, params?: unknown[], options?: QueryOptions): Promise<Results<R>> =>
            !preparable(text, params, options) || tx.closed ? tx.query<R>(text, params, options) : runPrepared<R>(text, params, options),
        }),
      ),
  };
}

function concat(...parts: Uint8Array[]): Uint8Array {
  const whole = new Uint8Array(parts.reduce((size, part) => size + part.length, 0));
  let at = 0;
  for (const part of parts) {
    whole.set(part, at);
    at += part.length;
  }
  return whole;
}
