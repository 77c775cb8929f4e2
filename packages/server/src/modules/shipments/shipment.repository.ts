import type { ShipmentStatus } from "@commerce-ingest/shared";
import { sql } from "kysely";
import { keptSourceTime, notStale, now, wasInserted } from "../../db/sql.js";
import type { Executor, Trx } from "../../db/types.js";

export type ShipmentWrite = {
  external_id: string;
  order_id: number;
  tracking_number?: string | null;
  tracking_url?: string | null;
  carrier?: string | null;
  status?: ShipmentStatus | null;
  metadata?: string | null;
  source_updated_at?: string;
};

/** The store's orders with these external ids, locked (in key order) so they cannot vanish under their shipments: by external id. */
export async function findOrders(db: Trx, storeId: number, orderExternalIds: readonly string[]) {
  if (orderExternalIds.length === 0) return new Map<string, { id: number; customer_id: number }>();
  const rows = await db
    .selectFrom("orders")
    .select(["id", "customer_id", "external_id"])
    .where("store_id", "=", storeId)
    .where("external_id", "in", [...new Set(orderExternalIds)])
    .orderBy("external_id")
    .forKeyShare()
    .execute();
  return new Map(rows.map((row) => [row.external_id, row]));
}

export function findShipment(db: Executor, storeId: number, externalId: string) {
  return db.selectFrom("shipments").selectAll().where("store_id", "=", storeId).where("external_id", "=", externalId).executeTakeFirst();
}

/**
 * Inserts or updates these shipments in one statement; every write carries
 * the same fields (absent ones keep their stored value) and its own key.
 * Re-posting with another order re-links; `status_changed` says whether the
 * write changed the status.
 */
export function upsertShipments(db: Executor, storeId: number, shipments: readonly ShipmentWrite[]) {
  const first = shipments[0];
  if (!first) return Promise.resolve([]);
  const columns = Object.keys(first).filter((column) => column !== "external_id") as (keyof ShipmentWrite)[];
  return db
    .insertInto("shipments")
    .values(shipments.map((shipment) => ({ store_id: storeId, ...shipment })))
    .onConflict((oc) =>
      oc
        .columns(["store_id", "external_id"])
        .doUpdateSet((eb) => ({
          ...Object.fromEntries(columns.map((column) => [column, eb.ref(`excluded.${column}`)])),
          status_changed: columns.includes("status") ? sql<boolean>`shipments.status is distinct from excluded.status` : false,
          source_updated_at: keptSourceTime("shipments"),
          updated_at: now(),
        }))
        .where(notStale("shipments")),
    )
    .returningAll()
    .returning(wasInserted.as("inserted"))
    // Nothing comes back for a write older than the stored shipment.
    .execute();
}

export function findShipments(db: Executor, storeId: number, externalIds: readonly string[]) {
  if (externalIds.length === 0) return Promise.resolve([]);
  return db.selectFrom("shipments").selectAll().where("store_id", "=", storeId).where("external_id", "in", externalIds).execute();
}

/** The shipment with its order's external id, for reading back. */
export function findShipmentRecord(db: Executor, storeId: number, externalId: string) {
  return db
    .selectFrom("shipments as s")
    .innerJoin("orders as o", "o.id", "s.order_id")
    .selectAll("s")
    .select("o.external_id as order_external_id")
    .where("s.store_id", "=", storeId)
    .where("s.external_id", "=", externalId)
    .executeTakeFirst();
}
