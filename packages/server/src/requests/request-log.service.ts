import { isDatabaseUnavailable } from "../db/index.js";
import type { Db } from "../db/types.js";
import { errorForLog, type Logger } from "../logger.js";
import { formatTimestamp } from "../time.js";
import { deleteExpiredKeys } from "./idempotency.repository.js";
import * as repo from "./request-log.repository.js";

export type { RequestLogEntry } from "./request-log.repository.js";

/**
 * Keeps the recent API calls of each store for the console: written in
 * batches (every second, or every 500 calls) off the request's path, so a push
 * never waits for its own log line. A crash loses at most the last second of
 * log, never a push. Entries older than the retention are deleted as it goes.
 */
export type RequestLog = {
  record(entry: repo.RequestLogEntry): void;
  /** A call to a store's path with a key no team has: counted by the key's first characters, never kept whole. */
  unknownKey(storeId: number, prefix: string): void;
  flush(): Promise<void>;
  close(): Promise<void>;
};

/** How many characters of an unknown key are kept: enough to tell a mistyped or old key apart, nothing to use. */
export const UNKNOWN_KEY_PREFIX = 4;
/** Distinct (store, prefix) pairs held between flushes; past them, a flood's calls are not counted. */
const UNKNOWN_HELD = 1000;

/** How often calls are written: a refused call shows in the console within about a second. */
const FLUSH_MS = 250;
const BATCH = 500;
const PRUNE_EVERY_MS = 10 * 60 * 1000;

export function startRequestLog(db: Db, logger: Logger, retentionSeconds: number): RequestLog {
  let pending: repo.RequestLogEntry[] = [];
  let unknown = new Map<string, { storeId: number; prefix: string; calls: number }>();
  let writing: Promise<void> = Promise.resolve();
  let lastPrune = 0;

  function flush(): Promise<void> {
    const batch = pending;
    pending = [];
    const counts = [...unknown.values()];
    unknown = new Map();
    writing = writing.then(async () => {
      try {
        await insertEach(batch);
        await repo.countUnknownKeys(db, counts);
        if (Date.now() - lastPrune > PRUNE_EVERY_MS) {
          lastPrune = Date.now();
          await repo.deleteEntriesBefore(db, retentionSeconds);
          // The same housekeeping drops idempotency keys past their 24 hours.
          await deleteExpiredKeys(db);
        }
      } catch (error) {
        logger.warn({ err: errorForLog(error), entries: batch.length }, "could not write the request log");
      }
    });
    return writing;
  }

  /** The entries in one statement; should it be refused for one of them, each alone, so that one loses only itself. */
  async function insertEach(batch: repo.RequestLogEntry[]): Promise<void> {
    try {
      await repo.insertEntries(db, batch);
    } catch (error) {
      if (batch.length === 1 || isDatabaseUnavailable(error)) throw error;
      for (const entry of batch) {
        await repo.insertEntries(db, [entry]).catch((failed: unknown) => {
          if (isDatabaseUnavailable(failed)) throw failed;
          logger.warn({ err: errorForLog(failed), requestId: entry.request_id }, "could not keep a call in the request log");
        });
      }
    }
  }

  const timer = setInterval(() => void flush(), FLUSH_MS);
  timer.unref();
  return {
    record(entry) {
      pending.push(entry);
      if (pending.length >= BATCH) void flush();
    },
    unknownKey(storeId, prefix) {
      const at = `${storeId}:${prefix}`;
      const held = unknown.get(at);
      if (held) held.calls++;
      else if (unknown.size < UNKNOWN_HELD) unknown.set(at, { storeId, prefix, calls: 1 });
    },
    flush,
    async close() {
      clearInterval(timer);
      await flush();
    },
  };
}

/** One call as the console shows it: never a body, a phone or a key's value. */
export function toRequestEntry(row: Awaited<ReturnType<typeof repo.listEntries>>[number]) {
  return {
    id: row.id,
    at: formatTimestamp(row.created_at),
    method: row.method,
    route: row.route,
    path: row.path,
    status: row.status,
    code: row.code,
    error: row.error,
    external_id: row.record_external_id,
    request_id: row.request_id,
    latency_ms: Math.round(row.latency_ms * 10) / 10,
    key: row.key_name === null ? null : { name: row.key_name, last4: row.key_last4 ?? "" },
  };
}

export async function listRequests(db: Db, filter: repo.RequestLogFilter) {
  return (await repo.listEntries(db, filter)).map(toRequestEntry);
}
