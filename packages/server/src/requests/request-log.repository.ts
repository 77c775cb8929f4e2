import { sql } from "kysely";
import type { Insertable } from "kysely";
import type { Executor, RequestLogTable } from "../db/types.js";

/** One API call as the log keeps it: the table's columns but its generated id. */
export type RequestLogEntry = Omit<Insertable<RequestLogTable>, "id">;

/** Writes a batch of entries and marks their keys used, in one statement. */
export async function insertEntries(db: Executor, entries: RequestLogEntry[]): Promise<void> {
  if (entries.length === 0) return;
  const keyIds = [...new Set(entries.flatMap((entry) => (typeof entry.key_id === "number" ? [entry.key_id] : [])))];
  await db
    .with("used", (qb) =>
      qb
        .updateTable("api_keys")
        .set({ last_used_at: sql<Date>`now()` })
        .where("id", "in", keyIds.length > 0 ? keyIds : [-1]),
    )
    .insertInto("request_log")
    .values(entries)
    .execute();
}

export async function deleteEntriesBefore(db: Executor, retentionSeconds: number): Promise<void> {
  await db.deleteFrom("request_log").where("created_at", "<", sql<Date>`now() - make_interval(secs => ${retentionSeconds})`).execute();
  await db.deleteFrom("unknown_key_calls").where("last_at", "<", sql<Date>`now() - make_interval(secs => ${retentionSeconds})`).execute();
}

/** How many distinct prefixes a store keeps; past them, calls count under `*` (a flood of random keys adds no rows). */
export const UNKNOWN_KEY_PREFIXES = 50;

/**
 * Adds calls with unknown keys to their stores' counts, in one statement per
 * store: a store that does not exist counts nothing.
 */
export async function countUnknownKeys(db: Executor, counts: ReadonlyArray<{ storeId: number; prefix: string; calls: number }>): Promise<void> {
  for (const { storeId, prefix, calls } of counts) {
    await sql`
      insert into unknown_key_calls (store_id, key_prefix, calls)
      select s.id,
        case when exists (select 1 from unknown_key_calls u where u.store_id = s.id and u.key_prefix = ${prefix})
          or (select count(*) from unknown_key_calls u where u.store_id = s.id) < ${UNKNOWN_KEY_PREFIXES}
        then ${prefix} else '*' end,
        ${calls}::integer
      from stores s where s.id = ${storeId}
      on conflict (store_id, key_prefix) do update set calls = unknown_key_calls.calls + excluded.calls, last_at = now()`.execute(db);
  }
}

/** A store's unknown keys, most recently seen first. */
export function unknownKeys(db: Executor, storeId: number) {
  return db.selectFrom("unknown_key_calls").select(["key_prefix", "calls", "first_at", "last_at"]).where("store_id", "=", storeId).orderBy("last_at", "desc").limit(100).execute();
}

export type RequestLogFilter = {
  storeId: number;
  /** A class (`4xx`) or one status (`429`). */
  status?: string | undefined;
  code?: string | undefined;
  /** The route's template, as the list shows it. */
  route?: string | undefined;
  keyId?: number | undefined;
  /** The record the call wrote or named. */
  externalId?: string | undefined;
  /** The beginning of a request id. */
  requestId?: string | undefined;
  /** Calls at or after this time, and before `to`. */
  from?: string | undefined;
  to?: string | undefined;
  /** The page after this entry (the last of the page before): older ones. */
  before?: { at: string; id: number } | undefined;
  limit: number;
};

export function listEntries(db: Executor, filter: RequestLogFilter) {
  let query = db
    .selectFrom("request_log as r")
    .leftJoin("api_keys as k", "k.id", "r.key_id")
    .select(["r.id", "r.created_at", "r.method", "r.route", "r.path", "r.status", "r.code", "r.error", "r.request_id", "r.latency_ms", "r.record_external_id", "k.name as key_name", "k.last4 as key_last4"])
    .where("r.store_id", "=", filter.storeId);
  if (filter.status?.endsWith("xx")) {
    const floor = Number(filter.status[0]) * 100;
    query = query.where("r.status", ">=", floor).where("r.status", "<", floor + 100);
  } else if (filter.status) {
    query = query.where("r.status", "=", Number(filter.status));
  }
  if (filter.code) query = query.where("r.code", "=", filter.code);
  if (filter.route) query = query.where("r.route", "=", filter.route);
  if (filter.keyId) query = query.where("r.key_id", "=", filter.keyId);
  if (filter.externalId) query = query.where("r.record_external_id", "=", filter.externalId);
  // A prefix, its LIKE wildcards taken as themselves.
  if (filter.requestId) query = query.where("r.request_id", "like", `${filter.requestId.replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
  if (filter.from) query = query.where("r.created_at", ">=", sql<Date>`${filter.from}::timestamptz`);
  if (filter.to) query = query.where("r.created_at", "<", sql<Date>`${filter.to}::timestamptz`);
  if (filter.before) query = query.where(sql<boolean>`(r.created_at, r.id) < (${filter.before.at}::timestamptz, ${filter.before.id}::bigint)`);
  return query.orderBy("r.created_at", "desc").orderBy("r.id", "desc").limit(filter.limit).execute();
}
