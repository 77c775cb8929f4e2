import { sql, type RawBuilder, type SelectQueryBuilder } from "kysely";
import type { Executor } from "./types.js";

/** A row's place in a list: its change time (UTC, to the microsecond) and id. */
export type PagePosition = { at: string; id: number };

/** A page of a store's records in the order they changed: where it starts, and how far it may read. */
export type PageWindow = {
  /** Every change before this time is committed, and no later commit can add one before it (see `changeHorizon`). */
  horizon: string;
  /** The last row of the page before. */
  after: PagePosition | undefined;
  /** Only rows changed after this time (ISO 8601). */
  updatedAfter: string | undefined;
  limit: number;
};

/** A row's change time as a cursor holds it: UTC, to the microsecond, which a JavaScript date would round. */
const changeTime = (column: ReturnType<typeof sql.ref>) => sql<string>`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD HH24:MI:SS.US')`;

/**
 * The time before which a list may read changes: the start of the oldest
 * transaction still running on the database (now, when none is). A record's
 * `updated_at` is the time its writing transaction started, so a change before
 * this is committed already, and none can commit before it later: a page that
 * ends here never skips a record whose write was still under way. Read in a
 * statement of its own, before the page's own (whose snapshot then sees every
 * transaction that ended by then).
 */
export async function changeHorizon(db: Executor): Promise<string> {
  const { rows } = await sql<{ horizon: string }>`
    select ${changeTime(sql.ref("t"))} as horizon
    from (select least(now(), coalesce((
      select min(xact_start) from pg_stat_activity
      where pid <> pg_backend_pid() and xact_start is not null and backend_type = 'client backend' and datname = current_database()), now())) as t) as h`.execute(db);
  return rows[0]?.horizon ?? "";
}

/**
 * The rows of `alias` (a table with `store_id`-scoped `updated_at` and `id`)
 * within the window, in the order they changed then by id, one more than the
 * limit (one more comes back when there is a next page), each with its
 * `change_at` for the cursor. The table's index on (store_id, updated_at, id)
 * serves it.
 */
export function inWindow<DB, TB extends keyof DB, O>(query: SelectQueryBuilder<DB, TB, O>, alias: string, window: PageWindow) {
  const at = sql.ref(`${alias}.updated_at`);
  const id = sql.ref(`${alias}.id`);
  return query
    .where(sql<boolean>`${at} < ${window.horizon}::timestamp at time zone 'UTC'`)
    .where(changedLater(alias, window.after, window.updatedAfter))
    .select(changeTime(at).as("change_at"))
    .orderBy(at)
    .orderBy(id)
    .limit(window.limit + 1);
}

/** The tables a list pages through. */
export type ChangeTable = "orders" | "customers" | "checkouts" | "shipments";

/**
 * Whether the store has a row changed after `position` (and after the
 * window's `updatedAfter`), the horizon aside: what a page that ended at the
 * horizon left for the pages after it, once the writes under way commit.
 */
export async function changedAfter(db: Executor, table: ChangeTable, storeId: number, window: PageWindow, position: PagePosition): Promise<boolean> {
  const { rows } = await sql<{ more: boolean }>`
    select exists(select 1 from ${sql.table(table)} as t where t.store_id = ${storeId} and ${changedLater("t", position, window.updatedAfter)}) as more`.execute(db);
  return rows[0]?.more === true;
}

/**
 * The rows of `alias` after `position` in change order (then id), and
 * changed after `updatedAfter` at the precision responses give times in
 * (milliseconds: a record's own `updated_at` is not after itself).
 */
function changedLater(alias: string, position: PagePosition | undefined, updatedAfter: string | undefined): RawBuilder<boolean> {
  const at = sql.ref(`${alias}.updated_at`);
  const conditions = [
    ...(position ? [sql`(${at}, ${sql.ref(`${alias}.id`)}) > (${position.at}::timestamp at time zone 'UTC', ${position.id}::bigint)`] : []),
    ...(updatedAfter === undefined ? [] : [sql`${at} >= date_trunc('milliseconds', ${updatedAfter}::timestamptz) + interval '1 millisecond'`]),
  ];
  return conditions.length === 0 ? sql<boolean>`true` : sql<boolean>`(${sql.join(conditions, sql` and `)})`;
}
