import { keptSourceTime, notStale, notStaleFor, now, wasInserted } from "../../db/sql.js";
import type { Executor } from "../../db/types.js";
import type { SharedOptionalColumns } from "../fields.js";

export type OrderWrite = {
  external_id: string;
  customer_id: number;
  placed_at: string;
  total_price: string;
  financial_status?: string | null;
  fulfillment_status?: string | null;
  source_updated_at?: string;
} & SharedOptionalColumns;

export function upsertOrder(db: Executor, storeId: number, order: OrderWrite) {
  const { external_id: _key, ...changes } = order;
  return db
    .insertInto("orders")
    .values({ store_id: storeId, ...order })
    .onConflict((oc) =>
      oc
        .columns(["store_id", "external_id"])
        .doUpdateSet({ ...changes, source_updated_at: keptSourceTime("orders"), updated_at: now() })
        .where(notStale("orders")),
    )
    .returningAll()
    .returning(wasInserted.as("inserted"))
    // Nothing comes back for a write older than the stored order.
    .executeTakeFirst();
}

export function findOrder(db: Executor, storeId: number, externalId: string) {
  return db.selectFrom("orders").selectAll().where("store_id", "=", storeId).where("external_id", "=", externalId).executeTakeFirst();
}

export function updateOrder(db: Executor, storeId: number, externalId: string, changes: Partial<Omit<OrderWrite, "external_id">>) {
  return db
    .updateTable("orders")
    .set({ ...changes, updated_at: now() })
    .where("store_id", "=", storeId)
    .where("external_id", "=", externalId)
    .where(notStaleFor(changes.source_updated_at))
    .returningAll()
    .executeTakeFirst();
}

/** The order with its customer's key, for reading back. */
export function findOrderRecord(db: Executor, storeId: number, externalId: string) {
  return db
    .selectFrom("orders as o")
    .leftJoin("customers as cu", "cu.id", "o.customer_id")
    .selectAll("o")
    .select("cu.external_id as customer_external_id")
    .where("o.store_id", "=", storeId)
    .where("o.external_id", "=", externalId)
    .executeTakeFirst();
}
