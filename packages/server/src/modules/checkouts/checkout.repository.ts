import type { CheckoutStatus } from "@commerce-ingest/shared";
import { sql } from "kysely";
import { keptSourceTime, notStale, notStaleFor, now, wasInserted } from "../../db/sql.js";
import type { Executor } from "../../db/types.js";
import type { SharedOptionalColumns } from "../fields.js";

export type CheckoutWrite = {
  external_id: string;
  customer_id: number;
  abandoned_at: string;
  total_price: string;
  recovery_url?: string | null;
  source_updated_at?: string;
} & SharedOptionalColumns;

/**
 * Inserts or updates these checkouts in one statement; every write carries the
 * same fields (absent ones keep their stored value) and its own key. A new
 * checkout starts `abandoned`. A re-push moves `active` back to `abandoned`
 * and keeps any other state: a late or repeated push never reopens a
 * recovered, completed or expired checkout.
 */
export function upsertCheckouts(db: Executor, storeId: number, checkouts: readonly CheckoutWrite[]) {
  const first = checkouts[0];
  if (!first) return Promise.resolve([]);
  const columns = Object.keys(first).filter((column) => column !== "external_id") as (keyof CheckoutWrite)[];
  return db
    .insertInto("checkouts")
    .values(checkouts.map((checkout) => ({ store_id: storeId, status: "abandoned" as const, ...checkout })))
    .onConflict((oc) =>
      oc
        .columns(["store_id", "external_id"])
        .doUpdateSet((eb) => ({
          ...Object.fromEntries(columns.map((column) => [column, eb.ref(`excluded.${column}`)])),
          status: sql<CheckoutStatus>`case when checkouts.status = 'active' then 'abandoned' else checkouts.status end`,
          abandonment_count: sql<number>`checkouts.abandonment_count + case when checkouts.status = 'active' then 1 else 0 end`,
          entered_abandoned: sql<boolean>`checkouts.status = 'active'`,
          source_updated_at: keptSourceTime("checkouts"),
          updated_at: now(),
        }))
        .where(notStale("checkouts")),
    )
    .returningAll()
    .returning(wasInserted.as("inserted"))
    // Nothing comes back for a write older than the stored checkout.
    .execute();
}

export function findCheckouts(db: Executor, storeId: number, externalIds: readonly string[]) {
  if (externalIds.length === 0) return Promise.resolve([]);
  return db.selectFrom("checkouts").selectAll().where("store_id", "=", storeId).where("external_id", "in", externalIds).execute();
}

export function findCheckout(db: Executor, storeId: number, externalId: string) {
  return db.selectFrom("checkouts").selectAll().where("store_id", "=", storeId).where("external_id", "=", externalId).executeTakeFirst();
}

export function updateCheckout(
  db: Executor,
  storeId: number,
  externalId: string,
  changes: Partial<Omit<CheckoutWrite, "external_id">> & { status?: CheckoutStatus },
) {
  // Entering `abandoned` from another state is a new abandonment.
  const entering = changes.status === "abandoned";
  return db
    .updateTable("checkouts")
    .set({
      ...changes,
      ...(entering ? { abandonment_count: sql<number>`abandonment_count + case when status <> 'abandoned' then 1 else 0 end` } : {}),
      entered_abandoned: entering ? sql<boolean>`status <> 'abandoned'` : false,
      updated_at: now(),
    })
    .where("store_id", "=", storeId)
    .where("external_id", "=", externalId)
    .where(notStaleFor(changes.source_updated_at))
    .returningAll()
    .executeTakeFirst();
}

/** The checkout with its customer's key, for reading back. */
export function findCheckoutRecord(db: Executor, storeId: number, externalId: string) {
  return db
    .selectFrom("checkouts as c")
    .leftJoin("customers as cu", "cu.id", "c.customer_id")
    .selectAll("c")
    .select("cu.external_id as customer_external_id")
    .where("c.store_id", "=", storeId)
    .where("c.external_id", "=", externalId)
    .executeTakeFirst();
}
