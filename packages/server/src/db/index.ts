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
import { preparingPGlite, preparingPool } from "./prepared.js";

export { isStalePlan, retries } from "./prepared.js";

/**
 * The embedded database's settings: PGlite's own, with 16 MB of shared buffers
 * rather than PostgreSQL's 128 MB. They live in the server's own memory, which
 * they would otherwise double; the operating system caches the files as well,
 * and the embedded mode serves one process on one machine. Its upkeep (see
 * `upkeep.ts`) vacuums in 16 MB rather than 64: that memory, once taken, stays.
 */
const EMBEDDED_START_PARAMS = [...PGlite.defaultStartParams, "-c", "shared_buffers=16MB", "-c", "maintenance_work_mem=16MB"];

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
const INT8_ARRAY = 1016;

// bigint ids and counts fit in a double here (ids stay far below 2^53), alone or in arrays, as on
// the embedded database; money stays a string.
const pgTypes = {
  getTypeParser(oid: number, format?: "text" | "binary") {
    if (oid === INT8) return (value: string) => Number(value);
    if (oid === INT8_ARRAY) {
      const parseArray = pg.types.getTypeParser(INT8_ARRAY as Parameters<typeof pg.types.getTypeParser>[0], "text") as (value: string) => Array<string | null>;
      return (value: string) => parseArray(value).map((item) => (item === null ? null : Number(item)));
    }
    if (oid === NUMERIC) return (value: string) => value;
    return pg.types.getTypeParser(oid, format) as (value: string) => unknown;
  },
};

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
      parsers: { [INT8]: (value: string) => Number(value), [NUMERIC]: (value: string) => value },
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
