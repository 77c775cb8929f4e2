import { sql } from "kysely";
import type { Db } from "../../db/types.js";
import { formatTimestamp } from "../../db/sql.js";

/** The ranges the overview draws, and the width of each bar. */
export const OVERVIEW_RANGES = { "24h": { seconds: 24 * 3600, bucketSeconds: 3600 }, "7d": { seconds: 7 * 24 * 3600, bucketSeconds: 6 * 3600 } } as const;
export type OverviewRange = keyof typeof OVERVIEW_RANGES;

const KINDS = ["orders", "customers", "checkouts", "shipments"] as const;

/**
 * A store's last day or week: its records by when they were last written,
 * per kind, and its refused API calls, in buckets of an hour (a day) or six
 * hours (a week), oldest first; and its automation backlog now.
 */
export async function storeOverview(db: Db, storeId: number, range: OverviewRange) {
  const { seconds, bucketSeconds } = OVERVIEW_RANGES[range];
  const now = Date.now();
  const start = new Date(Math.floor((now - seconds * 1000) / (bucketSeconds * 1000)) * bucketSeconds * 1000 + bucketSeconds * 1000);
  const bucket = (column: string) => sql`date_bin(make_interval(secs => ${bucketSeconds}), ${sql.ref(column)}, ${start.toISOString()}::timestamptz)`;
  const written = await sql<{ kind: string; at: Date; count: string }>`
    select kind, at, count(*) as count from (
      ${sql.join(
        KINDS.map((kind) => sql`select ${kind}::text as kind, ${bucket("updated_at")} as at from ${sql.table(kind)} where store_id = ${storeId} and updated_at >= ${start.toISOString()}::timestamptz`),
        sql` union all `,
      )}
    ) as w group by kind, at`.execute(db);
  const refused = await sql<{ at: Date; count: string }>`
    select ${bucket("created_at")} as at, count(*) as count from request_log
    where store_id = ${storeId} and created_at >= ${start.toISOString()}::timestamptz and status >= 400 group by 1`.execute(db);
  const backlog = await sql<{ due: string; scheduled: string }>`
    select count(*) filter (where run_at <= now()) as due, count(*) filter (where run_at > now()) as scheduled
    from automation_jobs where store_id = ${storeId} and status in ('pending', 'running')`.execute(db);

  const buckets = Array.from({ length: Math.round(seconds / bucketSeconds) }, (_, i) => ({
    at: formatTimestamp(new Date(start.getTime() + i * bucketSeconds * 1000)),
    orders: 0,
    customers: 0,
    checkouts: 0,
    shipments: 0,
    refused: 0,
  }));
  const index = (at: Date) => Math.round((at.getTime() - start.getTime()) / (bucketSeconds * 1000));
  for (const row of written.rows) {
    const slot = buckets[index(row.at)];
    if (slot && (KINDS as readonly string[]).includes(row.kind)) slot[row.kind as (typeof KINDS)[number]] += Number(row.count);
  }
  for (const row of refused.rows) {
    const slot = buckets[index(row.at)];
    if (slot) slot.refused += Number(row.count);
  }
  const totals = { orders: 0, customers: 0, checkouts: 0, shipments: 0, refused: 0 };
  for (const slot of buckets) for (const key of Object.keys(totals) as Array<keyof typeof totals>) totals[key] += slot[key];
  return {
    range,
    bucket_seconds: bucketSeconds,
    buckets,
    totals,
    backlog: { due: Number(backlog.rows[0]?.due ?? 0), scheduled: Number(backlog.rows[0]?.scheduled ?? 0) },
  };
}
