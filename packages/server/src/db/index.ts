import { execFile } from "node:child_process";
import path from "node:path";
import fs from "node:fs";
import { createRequire } from "node:module";
import { promisify } from "node:util";
import { PGlite, parse, protocol, type QueryOptions, type Results, type Transaction } from "@electric-sql/pglite";
import { Kysely, PGliteDialect, PostgresDialect, type PGlite as KyselyPGlite, type PostgresCursor, type PostgresPool, type PostgresPoolClient, type PostgresQueryResult } from "kysely";
import pg from "pg";
import type { Database, Db } from "./types.js";
import { DataDirLock } from "./lock.js";
import { embeddedParsers, isStalePlan, pgTypes, retries } from "./sql.js";
export { isStalePlan, retries } from "./sql.js";

/**
 * The service's sessions, on both databases, never JIT-compile a statement: they take milliseconds, and
 * PostgreSQL's estimate of one over arrays of parameters can be far above its real cost (an import chunk of
 * 2,000 orders at 200,000 rows), for which it compiled the statement each time, for about 100 ms. (Batches and
 * imports also plan each statement once for any values: see `planForAnyValues`.)
 */
const NO_JIT = "jit=off";

/**
 * The embedded database's settings: PGlite's own, with 16 MB of shared buffers
 * rather than PostgreSQL's 128 MB. They live in the server's own memory, which
 * they would otherwise double; the operating system caches the files as well,
 * and the embedded mode serves one process on one machine. Its upkeep (see
 * `upkeep.ts`) vacuums in 16 MB rather than 64: that memory, once taken, stays.
 */
const EMBEDDED_START_PARAMS = [...PGlite.defaultStartParams, "-c", "shared_buffers=16MB", "-c", "maintenance_work_mem=16MB", "-c", NO_JIT];

/**
 * Creates the embedded database's files, when there are none yet, in a process
 * of its own: initdb takes some 500 MB that would otherwise stay with the
 * server for its whole life.
 */
async function createDataDir(dataDir: string): Promise<void> {
  if (fs.existsSync(path.join(dataDir, "PG_VERSION"))) return;
  const module = createRequire(import.meta.url).resolve("@electric-sql/pglite");
  const script = `require(${JSON.stringify(module)}).PGlite.create(${JSON.stringify(dataDir)}).then((db) => db.close())`;
  await promisify(execFile)(process.execPath, ["-e", script]);
}

export type DatabaseOptions =
  | { kind: "postgres"; url: string; poolSize?: number; timeouts?: { connectMs: number; statementMs: number } }
  /** `dataDir` undefined: an in-memory database that vanishes with the process. */
  | { kind: "embedded"; dataDir: string | undefined };

export type DatabaseHandle = {
  db: Db;
  kind: "postgres" | "embedded";
  /** The pg pool when on PostgreSQL, for libraries that take one. */
  pool: pg.Pool | undefined;
  /**
   * Runs `work` on a database handle without the request timeouts: a migration
   * may legitimately run longer than any request should (an index on a big
   * table). On PostgreSQL a connection of its own; the embedded database has none.
   */
  withoutTimeouts<T>(work: (db: Db) => Promise<T>): Promise<T>;
  /**
   * Calls `onNotify` for each NOTIFY on any of `channels`, and `onState` with
   * whether notifications can arrive (on PostgreSQL a connection of its own,
   * named {@link LISTENER_NAME} and reopened after a loss: while it is down,
   * `onState(false)`). Resolves to a stop function.
   */
  listen(channels: string[], onNotify: (notice: Notice) => void, onState: (live: boolean) => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
};

/** One notification as it arrived. */
export type Notice = {
  channel: string;
  payload: string;
  /** The PostgreSQL backend that sent it (0 on the embedded database). */
  senderPid: number;
  /** Sends a notification back through the connection that heard this one. */
  reply(channel: string, payload: string): void;
};

/** The `application_name` of every connection that listens, so a process can find the others in `pg_stat_activity`. */
export const LISTENER_NAME = "commerce-ingest-listen";

/** LISTEN on a dedicated PostgreSQL connection, reopened a second after any loss until stopped. */
async function listenPostgres(url: string, channels: string[], onNotify: (notice: Notice) => void, onState: (live: boolean) => void): Promise<() => Promise<void>> {
  let stopped = false;
  let client: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;
  const connect = async (): Promise<void> => {
    const next = new pg.Client({ connectionString: url, application_name: LISTENER_NAME, connectionTimeoutMillis: 5_000 });
    const lost = () => {
      if (client !== next) return;
      client = undefined;
      onState(false);
      next.end().catch(() => {});
      if (!stopped) retry = setTimeout(() => void connect(), 1_000);
    };
    next.on("error", lost);
    next.on("end", lost);
    const reply = (channel: string, payload: string) => void next.query("select pg_notify($1, $2)", [channel, payload]).catch(() => {});
    next.on("notification", (message) => {
      if (channels.includes(message.channel)) onNotify({ channel: message.channel, payload: message.payload ?? "", senderPid: message.processId, reply });
    });
    client = next;
    try {
      await next.connect();
      for (const channel of channels) await next.query(`listen ${channel}`);
      if (client === next && !stopped) onState(true);
    } catch {
      lost();
    }
  };
  await connect();
  return async () => {
    stopped = true;
    clearTimeout(retry);
    const current = client;
    client = undefined;
    onState(false);
    await current?.end().catch(() => {});
  };
}

/** A PostgreSQL URL whose `options` also turn JIT off, unless they set `jit` themselves. */
function withoutJit(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return url;
  }
  const given = parsed.searchParams.get("options") ?? "";
  if (/\bjit\b/.test(given)) return url;
  parsed.searchParams.set("options", `${given} -c ${NO_JIT}`.trim());
  return parsed.toString();
}

export async function openDatabase(options: DatabaseOptions): Promise<DatabaseHandle> {
  if (options.kind === "postgres") {
    const pool = new pg.Pool({
      connectionString: withoutJit(options.url),
      max: options.poolSize ?? 10,
      types: pgTypes,
      // Bounded waits: for a connection, for one statement (server side), for its answer (client side,
      // which also covers a frozen server), and for a transaction left open. Past them: 503, never a hang.
      connectionTimeoutMillis: options.timeouts?.connectMs ?? 5_000,
      statement_timeout: options.timeouts?.statementMs ?? 5_000,
      query_timeout: (options.timeouts?.statementMs ?? 5_000) + 1_000,
      idle_in_transaction_session_timeout: 30_000,
      application_name: "commerce-ingest",
    });
    // A client that loses its server (restart, failover) must not crash the process: idle
    // clients report through the pool, clients in use through their own listener; either
    // way the query in flight fails and the request answers 503.
    pool.on("error", () => {});
    pool.on("connect", (client) => client.on("error", () => {}));
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: preparingPool(pool) }) });
    const withoutTimeouts = async <T>(work: (db: Db) => Promise<T>): Promise<T> => {
      const unbounded = new Kysely<Database>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: options.url, max: 1, types: pgTypes, application_name: "commerce-ingest-migrate" }) }) });
      try {
        return await work(unbounded);
      } finally {
        await unbounded.destroy();
      }
    };
    const listen = (channels: string[], onNotify: (notice: Notice) => void, onState: (live: boolean) => void) => listenPostgres(options.url, channels, onNotify, onState);
    return { db, kind: "postgres", pool, withoutTimeouts, listen, close: () => db.destroy() };
  }

  const lock = options.dataDir ? DataDirLock.acquire(options.dataDir) : undefined;
  try {
    const dataDir = options.dataDir ? path.join(options.dataDir, "pgdata") : undefined;
    if (dataDir) await createDataDir(dataDir);
    const pglite = await PGlite.create(dataDir, {
      parsers: embeddedParsers,
      startParams: EMBEDDED_START_PARAMS,
    });
    const db = new Kysely<Database>({ dialect: new PGliteDialect({ pglite: preparingPGlite(pglite) }) });
    return {
      db,
      kind: "embedded",
      pool: undefined,
      withoutTimeouts: (work) => work(db),
      async listen(channels, onNotify, onState) {
        const reply = (channel: string, payload: string) => void pglite.query("select pg_notify($1, $2)", [channel, payload]).catch(() => {});
        const subscribe = (channel: string) => pglite.listen(channel, (payload) => onNotify({ channel, payload, senderPid: 0, reply }));
        // A closed database has nothing to say: nothing is cached then.
        const unsubscribes = pglite.closed ? undefined : await Promise.all(channels.map(subscribe)).catch(() => undefined);
        onState(unsubscribes !== undefined);
        if (!unsubscribes) return async () => {};
        return async () => {
          onState(false);
          if (!pglite.closed) for (const unsubscribe of unsubscribes) await unsubscribe();
        };
      },
      close: async () => {
        try {
          await db.destroy();
          if (!pglite.closed) await pglite.close();
        } finally {
          lock?.release();
        }
      },
    };
  } catch (error) {
    lock?.release();
    throw error;
  }
}

const UNAVAILABLE_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ENOTFOUND",
  "ETIMEDOUT",
  "EPIPE",
  "EHOSTUNREACH",
  "57014", // query_canceled: a statement over the statement timeout
  "57P01", // admin_shutdown
  "57P02", // crash_shutdown
  "57P03", // cannot_connect_now
  "53300", // too_many_connections
  "3D000", // invalid_catalog_name: the database is gone
  "08000",
  "08001",
  "08003",
  "08004",
  "08006",
]);

/** True when an error means "the database cannot be reached", which callers see as 503. */
export function isDatabaseUnavailable(error: unknown): boolean {
  for (let current: unknown = error, depth = 0; current instanceof Error && depth < 5; depth++) {
    const code = "code" in current ? String(current.code) : "";
    if (UNAVAILABLE_CODES.has(code)) return true;
    if (
      /PGlite is closed|PGlite instance is already closed|Connection terminated|timeout exceeded when trying to connect|driver has already been destroyed|not queryable|Query read timeout/i.test(
        current.message,
      )
    ) {
      return true;
    }
    if (current instanceof AggregateError && current.errors.some((inner) => isDatabaseUnavailable(inner))) return true;
    current = current.cause;
  }
  return false;
}

/**
 * The most statements one connection (or the embedded database) keeps
 * prepared, and the most parameters a prepared one takes. A statement's text
 * follows the shape of what it writes (which fields, in which order, one
 * record or many), so a server whose shops send many shapes meets more texts
 * than this over a connection's life: past it, the one least recently run is
 * let go for the new one (see `PreparedNames`), and the shapes in use stay
 * prepared.
 */
const PREPARED_PER_CONNECTION = 200;
const PREPARED_MAX_PARAMETERS = 64;
/**
 * A list whose length is the input's: `in ($1, $2, ...)`, or the rows of
 * `values ($1, ...), ($5, ...)`, each row opening on a parameter (or on
 * `default`, for a column a row leaves out). Not any `), (`: a set-based
 * statement's arrays, each taken apart by a subquery (`...e(value, n)), (select
 * ...`), keep one text for any number of records.
 */
const VALUE_LIST = /\bin \(\$\d+, |\), \((?:\$\d+|default)\b/;

/**
 * Whether a statement is worth a name: only one whose text repeats. One whose
 * text changes with its input (a batch's, with many parameters, or a list, see
 * `VALUE_LIST`) is planned at each run.
 */
const worthPreparing = (text: string, parameters: number): boolean => parameters > 0 && parameters <= PREPARED_MAX_PARAMETERS && !VALUE_LIST.test(text);

/**
 * The statements a session keeps prepared, by their text, least recently run
 * first (a Map keeps its keys in the order they were set): at most
 * `PREPARED_PER_CONNECTION`.
 */
class PreparedNames<T> {
  readonly #byText = new Map<string, T>();

  /** The statement prepared for `text`, now the most recently run; undefined when it has none. */
  use(text: string): T | undefined {
    const prepared = this.#byText.get(text);
    if (prepared !== undefined) {
      this.#byText.delete(text);
      this.#byText.set(text, prepared);
    }
    return prepared;
  }

  has(text: string): boolean {
    return this.#byText.has(text);
  }

  /** The statement to let go before one more is prepared (the least recently run), when there is no room; it is forgotten here. */
  makeRoom(): { text: string; prepared: T } | undefined {
    if (this.#byText.size < PREPARED_PER_CONNECTION) return undefined;
    const [text, prepared] = this.#byText.entries().next().value as [string, T];
    this.#byText.delete(text);
    return { text, prepared };
  }

  set(text: string, prepared: T): void {
    this.#byText.set(text, prepared);
  }

  delete(text: string): void {
    this.#byText.delete(text);
  }
}

/**
 * What a connection has prepared: each statement's name by its text, whether a transaction is open on it, and
 * the names to let go once none is (a plan found stale inside a transaction, which refuses the `DEALLOCATE`).
 */
type Prepared = { names: PreparedNames<string>; next: number; inTransaction: boolean; stale: string[] };

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
 * failed with it and is retried whole by `inTransaction`, and the stale
 * statement is let go once the transaction is over.
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
      if (!view) views.set(client, (view = preparingClient(client, { names: new PreparedNames(), next: 0, inTransaction: false, stale: [] })));
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
  // pg's result says its command as any string; kysely reads only the ones it knows.
  const run = <R>(config: pg.QueryConfig) => closingOnReadTimeout(client.query(config)) as unknown as Promise<PostgresQueryResult<R>>;
  /** pg's own record of what it parsed on this connection, by name (it parses a name once): a name let go leaves it too. */
  const parsed = (client as { connection?: { parsedStatements?: Record<string, string> } }).connection?.parsedStatements;
  const deallocate = async (name: string) => {
    await run({ text: `deallocate ${name}` });
    if (parsed) delete parsed[name];
  };

  /**
   * Runs a statement prepared as `name`; one whose plan a migration made stale is let go before the next statement
   * outside a transaction (see `query`), and prepared anew: outside a transaction at once.
   */
  const runPrepared = <R>(name: string, text: string, values: unknown[]): Promise<PostgresQueryResult<R>> =>
    run<R>({ name, text, values }).catch((error: unknown) => {
      if (!isStalePlan(error)) throw error;
      state.names.delete(text);
      state.stale.push(name);
      if (state.inTransaction) throw error;
      retries.stale_plan++;
      return query<R>(text, values);
    });

  function query<R>(text: string, parameters: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>>;
  function query<R>(cursor: PostgresCursor<R>): PostgresCursor<R>;
  function query<R>(textOrCursor: string | PostgresCursor<R>, parameters: ReadonlyArray<unknown> = []): Promise<PostgresQueryResult<R>> | PostgresCursor<R> {
    if (typeof textOrCursor !== "string") return client.query(textOrCursor as never);
    const text = textOrCursor;
    // Statements found stale are let go outside a transaction (one inside refuses it), before anything else runs.
    if (state.stale.length > 0 && !state.inTransaction) {
      const stale = state.stale.splice(0);
      return Promise.all(stale.map((name) => deallocate(name).catch(() => {}))).then(() => query<R>(text, parameters));
    }
    const values = parameters as unknown[];
    // Transaction control takes no parameters.
    if (values.length === 0 && TRANSACTION_CONTROL.test(text)) state.inTransaction = !TRANSACTION_END.test(text);
    const known = state.names.use(text);
    if (known) return runPrepared<R>(known, text, values);
    if (!worthPreparing(text, values.length)) return run<R>({ text, values });
    const name = `ingest_${state.next++}`;
    const room = state.names.makeRoom();
    state.names.set(text, name);
    if (!room) return runPrepared<R>(name, text, values);
    // No room: the statement least recently run is let go first. A transaction that failed refuses even that: the
    // statement then stays prepared (as it is on the server), and this one runs without a name.
    return deallocate(room.prepared).then(
      () => runPrepared<R>(name, text, values),
      () => {
        state.names.delete(text);
        state.names.set(room.text, room.prepared);
        return run<R>({ text, values });
      },
    );
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
  const names = new PreparedNames<{ name: string; types: number[] }>();
  let next = 0;
  const exchange = (message: Uint8Array) => pglite.execProtocolStream(message, { syncToFs: false });

  /** A statement worth preparing: its text repeats (or it is prepared already). */
  const preparable = (text: string, params: unknown[] | undefined, options: QueryOptions | undefined): params is unknown[] =>
    Array.isArray(params) &&
    options?.blob === undefined &&
    (names.has(text) || worthPreparing(text, params.length));

  /** Runs a repeated statement, preparing it the first time, alone on the engine. */
  const runPrepared = <T>(text: string, params: unknown[], options: QueryOptions | undefined): Promise<Results<T>> =>
    pglite.runExclusive(async () => {
      let statement = names.use(text);
      if (!statement) {
        const name = `ingest_${next++}`;
        // No room: the statement least recently run is let go first, in the same exchange (a Close is taken even in
        // a transaction that failed, ahead of the Parse that such a transaction refuses).
        const room = names.makeRoom();
        const close = room ? [protocol.serialize.close({ type: "S", name: room.prepared.name })] : [];
        const described = await exchange(concat(...close, protocol.serialize.parse({ name, text }), protocol.serialize.describe({ type: "S", name }), protocol.serialize.sync()));
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
        // A plan a migration made stale is let go, and prepared anew at the next run.
        if (isStalePlan(error)) {
          names.delete(text);
          await exchange(concat(protocol.serialize.close({ type: "S", name }), protocol.serialize.sync())).catch(() => {});
        }
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
