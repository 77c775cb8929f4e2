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

/** The store's order with this external id, locked so it cannot vanish under the shipment. */
export function findOrder(db: Trx, storeId: number, orderExternalId: string) {
  return db
    .selectFrom("orders")
    .select(["id", "customer_id"])
    .where("store_id", "=", storeId)
    .where("external_id", "=", orderExternalId)
    .forKeyShare()
    .executeTakeFirst();
}

export function findShipment(db: Executor, storeId: number, externalId: string) {
  return db.selectFrom("shipments").selectAll().where("store_id", "=", storeId).where("external_id", "=", externalId).executeTakeFirst();
}

/** Re-posting with another order re-links; `status_changed` says whether this write changed the status. */
export function upsertShipment(db: Executor, storeId: number, shipment: ShipmentWrite) {
  const { external_id: _key, ...changes } = shipment;
  return db
    .insertInto("shipments")
    .values({ store_id: storeId, ...shipment })
    .onConflict((oc) =>
      oc.columns(["store_id", "external_id"]).doUpdateSet({
        ...changes,
        status_changed: changes.status === undefined ? false : sql<boolean>`shipments.status is distinct from excluded.status`,
        source_updated_at: keptSourceTime("shipments"),
        updated_at: now(),
      }).where(notStale("shipments")),
    )
    .returningAll()
    .returning(wasInserted.as("inserted"))
    // Nothing comes back for a write older than the stored shipment.
    .executeTakeFirst();
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
