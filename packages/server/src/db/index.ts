import { execFile } from "node:child_process";
import path from "node:path";
import fs from "node:fs";
import { createRequire } from "node:module";
import { promisify } from "node:util";
import { PGlite } from "@electric-sql/pglite";
import { Kysely, PGliteDialect, PostgresDialect } from "kysely";
import pg from "pg";
import type { Database, Db } from "./types.js";
import { DataDirLock } from "./lock.js";

/**
 * The embedded database's settings: PGlite's own, with 16 MB of shared buffers
 * rather than PostgreSQL's 128 MB. They live in the server's own memory, which
 * they would otherwise double; the operating system caches the files as well,
 * and the embedded mode serves one process on one machine.
 */
const EMBEDDED_START_PARAMS = [...PGlite.defaultStartParams, "-c", "shared_buffers=16MB"];

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

const INT8 = 20;
const NUMERIC = 1700;

// bigint ids and counts fit in a double here (ids stay far below 2^53); money stays a string.
const pgTypes = {
  getTypeParser(oid: number, format?: "text" | "binary") {
    if (oid === INT8) return (value: string) => Number(value);
    if (oid === NUMERIC) return (value: string) => value;
    return pg.types.getTypeParser(oid, format) as (value: string) => unknown;
  },
};

/** The most statements one connection keeps prepared, and the most parameters a prepared one takes. */
const PREPARED_PER_CONNECTION = 200;
const PREPARED_MAX_PARAMETERS = 64;

/**
 * Statements and transactions this process ran again after PostgreSQL refused
 * them, by why (a deadlock, a serialization failure, a plan a migration made
 * stale): reported at /metrics. A steady count of deadlocks means two writers
 * take the same rows in different orders.
 */
export const retries = { deadlock: 0, serialization: 0, stale_plan: 0 };

/**
 * Has PostgreSQL plan each statement the service repeats once per connection
 * (a named prepared statement) instead of at every run: planning is most of
 * the cost of a push's statement. Statements whose text changes with their
 * input (a batch's, with many parameters, or a list `in ($1, $2, ...)`) are
 * planned each time, as before, so the names go to statements that repeat.
 *
 * A statement whose tables changed shape under it (a migration by a newer
 * process) is prepared anew at its next run. Outside a transaction, the run
 * that found it stale is retried here at once; inside one, the transaction
 * failed with it and is retried whole by `inTransaction`.
 */
function prepareRepeated(client: pg.PoolClient): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  const names = new Map<string, string>();
  let next = 0;
  let inTransaction = false;
  const nameOf = (text: string): string | undefined => {
    let name = names.get(text);
    if (!name && names.size < PREPARED_PER_CONNECTION) {
      name = `ingest_${next++}`;
      names.set(text, name);
    }
    return name;
  };
  client.query = ((text: unknown, values?: unknown, ...rest: unknown[]) => {
    if (typeof text === "string" && TRANSACTION_CONTROL.test(text)) inTransaction = !TRANSACTION_END.test(text);
    if (typeof text !== "string" || !Array.isArray(values) || values.length === 0 || values.length > PREPARED_MAX_PARAMETERS || VALUE_LIST.test(text)) {
      return query(text, values, ...rest);
    }
    const name = nameOf(text);
    if (!name) return query(text, values, ...rest);
    if (rest.some((arg) => typeof arg === "function")) return query({ name, text, values }, ...rest);
    const run = (attempt: string) => query({ name: attempt, text, values }, ...rest) as Promise<unknown>;
    return run(name).catch((error: unknown) => {
      if (!isStalePlan(error)) throw error;
      names.delete(text);
      if (inTransaction) throw error;
      retries.stale_plan++;
      return run(nameOf(text) ?? name);
    });
  }) as typeof client.query;
}

const TRANSACTION_CONTROL = /^\s*(begin|start transaction|commit|end|rollback|abort)\b(?!\s+to\b)/i;
const TRANSACTION_END = /^\s*(commit|end|rollback|abort)\b/i;
const VALUE_LIST = /\bin \(\$\d+, /;

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

export async function openDatabase(options: DatabaseOptions): Promise<DatabaseHandle> {
  if (options.kind === "postgres") {
    const pool = new pg.Pool({
      connectionString: options.url,
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
    pool.on("connect", (client) => {
      client.on("error", () => {});
      prepareRepeated(client);
    });
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
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
      parsers: { [INT8]: (value: string) => Number(value), [NUMERIC]: (value: string) => value },
      startParams: EMBEDDED_START_PARAMS,
    });
    const db = new Kysely<Database>({ dialect: new PGliteDialect({ pglite }) });
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
