import { parse, protocol, type PGlite, type QueryOptions, type Results, type Transaction } from "@electric-sql/pglite";
import type pg from "pg";

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

/**
 * Has PostgreSQL plan each statement the service repeats once per connection
 * (a named prepared statement) instead of at every run: planning is most of
 * the cost of a push's statement. Only statements whose text repeats get a
 * name (see `worthPreparing`); the others are planned each time, as before.
 *
 * A statement whose tables changed shape under it (a migration by a newer
 * process) is prepared anew at its next run. Outside a transaction, the run
 * that found it stale is retried here at once; inside one, the transaction
 * failed with it and is retried whole by `inTransaction`.
 */
export function prepareRepeated(client: pg.PoolClient): void {
  const own = client.query.bind(client) as (...args: unknown[]) => unknown;
  /**
   * A statement whose answer did not come in time (the client's read timeout:
   * a frozen or unreachable server) leaves the connection in a state the
   * client no longer knows: the statement may still run, a transaction may
   * still be open on it. Such a connection is closed, so that no later
   * request runs its statements on it; the pool replaces it.
   */
  const query = (...args: unknown[]): unknown => {
    const result = own(...args);
    if (result instanceof Promise) {
      result.catch((error: unknown) => {
        if (error instanceof Error && /Query read timeout/i.test(error.message)) void client.end().catch(() => {});
      });
    }
    return result;
  };
  const names = new Map<string, string>();
  let next = 0;
  let inTransaction = false;
  /** The statement's name: known, or new when there is room and its text repeats (see above). */
  const nameOf = (text: string, values: unknown[]): string | undefined => {
    let name = names.get(text);
    if (!name && worthPreparing(text, values.length, names.size)) {
      name = `ingest_${next++}`;
      names.set(text, name);
    }
    return name;
  };
  client.query = ((text: unknown, values?: unknown, ...rest: unknown[]) => {
    if (typeof text !== "string" || !Array.isArray(values) || values.length === 0) {
      // Transaction control takes no parameters.
      if (typeof text === "string" && TRANSACTION_CONTROL.test(text)) inTransaction = !TRANSACTION_END.test(text);
      return query(text, values, ...rest);
    }
    const name = nameOf(text, values);
    if (!name) return query(text, values, ...rest);
    if (rest.some((arg) => typeof arg === "function")) return query({ name, text, values }, ...rest);
    const run = (attempt: string) => query({ name: attempt, text, values }, ...rest) as Promise<unknown>;
    return run(name).catch((error: unknown) => {
      if (!isStalePlan(error)) throw error;
      names.delete(text);
      if (inTransaction) throw error;
      retries.stale_plan++;
      return run(nameOf(text, values) ?? name);
    });
  }) as typeof client.query;
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


type Query = <T>(text: string, params?: unknown[], options?: QueryOptions) => Promise<Results<T>>;

/**
 * Has PGlite plan each statement the service repeats once, as the PostgreSQL
 * connections do (see `prepareRepeated`): PGlite's own `query` parses and
 * plans every statement it runs, which is most of a push's cost there. A
 * repeated statement is parsed and described once under a name; each run then
 * binds and executes it, in one exchange with the engine. Everything else
 * (other statements, transactions, LISTEN) goes through PGlite as before.
 */
export function prepareRepeatedEmbedded(pglite: PGlite): void {
  const names = new Map<string, { name: string; types: number[] }>();
  let next = 0;
  const ownQuery = pglite.query.bind(pglite) as Query;
  const ownTransaction = pglite.transaction.bind(pglite);
  const exchange = (message: Uint8Array) => pglite.execProtocolStream(message, { syncToFs: false });

  /** A statement worth preparing: repeated text, and room for it (or already prepared). */
  const preparable = (text: string, params: unknown[] | undefined, options: QueryOptions | undefined): params is unknown[] =>
    Array.isArray(params) &&
    params.length > 0 &&
    options?.blob === undefined &&
    (names.has(text) || worthPreparing(text, params.length, names.size));

  /** Runs a repeated statement, preparing it the first time; the caller holds PGlite's query lock. */
  async function runPrepared<T>(text: string, params: unknown[], options: QueryOptions | undefined): Promise<Results<T>> {
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
  }

  pglite.query = (async <T>(text: string, params?: unknown[], options?: QueryOptions): Promise<Results<T>> => {
    if (!preparable(text, params, options)) return ownQuery<T>(text, params, options);
    // As PGlite's own query: a database closing or closed refuses with its own error.
    await pglite._checkReady();
    const run = () => pglite._runExclusiveTransaction(() => pglite._runExclusiveQuery(() => runPrepared<T>(text, params, options)));
    // Outside a transaction, a run that found its plan stale is run again at once (prepared anew).
    const result = await run().catch((error: unknown) => {
      if (!isStalePlan(error)) throw error;
      retries.stale_plan++;
      return run();
    });
    await pglite.syncToFs();
    return result;
  }) as typeof pglite.query;

  pglite.transaction = (<T>(callback: (tx: Transaction) => Promise<T>) =>
    ownTransaction((tx) => {
      const txQuery = tx.query.bind(tx) as Query;
      const prepared = Object.create(tx) as Transaction;
      prepared.query = (<R>(text: string, params?: unknown[], options?: QueryOptions): Promise<Results<R>> => {
        if (!preparable(text, params, options) || tx.closed) return txQuery<R>(text, params, options);
        return pglite._runExclusiveQuery(() => runPrepared<R>(text, params, options));
      }) as Transaction["query"];
      return callback(prepared);
    }));
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
