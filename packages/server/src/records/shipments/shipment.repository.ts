import type { ShipmentStatus } from "@commerce-ingest/shared";
import { sql, type Insertable } from "kysely";
import { withTriggers } from "../../automations/triggers.js";
import { arrayColumns, carriedColumns, freshOrFail, linkedByKey, mergedColumns, notStale, overTables, rowValues, unnestRows, wasInserted } from "../../db/sql.js";
import { onlyRow, statement, type ValueOf } from "../../db/statement.js";
import type { Executor, ShipmentTable, Trx } from "../../db/types.js";

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
  const rows = await findOrdersStatement(db, { storeId, externalIds: [...new Set(orderExternalIds)] });
  return new Map(rows.map((row) => [row.external_id, row]));
}

/** `findOrders`' statement: one text for any number of orders, built once (see `statement`). */
const findOrdersStatement = statement(
  () => "",
  (db, value: ValueOf<{ storeId: number; externalIds: readonly string[] }>) =>
    db
      .selectFrom("orders")
      .select(["id", "customer_id", "external_id"])
      .where("store_id", "=", value((args) => args.storeId))
      .where("external_id", "=", sql<string>`any(${value((args) => args.externalIds)}::text[])`)
      .orderBy("external_id")
      .forKeyShare(),
);

export function findShipment(db: Executor, storeId: number, externalId: string) {
  return db.selectFrom("shipments").selectAll().where("store_id", "=", storeId).where("external_id", "=", externalId).executeTakeFirst();
}

/** The SQL type of each column a shipment's write can carry. */
const shipmentTypes: Record<keyof ShipmentWrite, string> = {
  external_id: "text",
  order_id: "bigint",
  tracking_number: "text",
  tracking_url: "text",
  carrier: "text",
  status: "text",
  metadata: "jsonb",
  source_updated_at: "timestamptz",
};

/**
 * Inserts or updates these shipments in one statement, their rows passed as
 * one array per column (`unnest`): the same statement text for any number of
 * shipments. Every write carries the same fields (absent ones keep their
 * stored value) and its own key; keys are distinct. Re-posting with another
 * order re-links; `status_changed` says whether the write changed the status.
 * Nothing comes back for a write older than the stored shipment. The same
 * statement records what the shipments written trigger (see `withTriggers`).
 */
export function upsertShipments(db: Executor, push: { storeId: number; shipments: readonly ShipmentWrite[]; backfill: boolean }) {
  if (push.shipments.length === 0) return Promise.resolve([]);
  return upsertShipmentsStatement(db, push);
}

/** `upsertShipments`' statement, built once per set of fields (see `statement`). */
const upsertShipmentsStatement = statement(
  ({ shipments }: { storeId: number; shipments: readonly ShipmentWrite[]; backfill: boolean }) => carriedColumns(shipments).join(),
  (db, value, { shipments }) => {
    const columns = ["external_id", ...carriedColumns(shipments)] as (keyof ShipmentWrite)[];
    const storeId = value((args) => args.storeId);
    const written = db.with("ship", (qc) =>
      overTables(qc)
        .insertInto("shipments")
        .columns(["store_id", ...columns])
        .expression(unnestRows([sql`${storeId}::bigint`], arrayColumns(value, shipmentTypes, columns, (args) => args.shipments)))
        .onConflict((oc) => oc.columns(["store_id", "external_id"]).doUpdateSet(shipmentMerge(carriedColumns(shipments))).where(notStale("shipments")))
        .returningAll()
        .returning(wasInserted.as("inserted")),
    );
    return withTriggers(written, { tables: ["ship"] }, { id: storeId }, { backfill: value((args) => args.backfill) })
      .selectFrom("ship")
      .selectAll();
  },
);

/** What a shipment's upsert sets on a stored one: the fields it carries, and whether its status changed. */
function shipmentMerge(columns: readonly string[]) {
  return {
    ...mergedColumns("shipments", columns),
    status_changed: columns.includes("status") ? sql<boolean>`shipments.status is distinct from excluded.status` : sql<boolean>`false`,
  };
}

/** Shipments written with their orders found in one statement (see `upsertShipmentsWithOrders`): each shipment's order by external id. */
export type ShipmentsToWrite = { storeId: number; shipments: ReadonlyArray<Omit<ShipmentWrite, "order_id">>; orderExternalIds: readonly string[]; backfill: boolean };

/**
 * Shipments in one statement, atomic by itself: their orders found and
 * locked by external id (CTE `ord`, in key order), the shipments whose order
 * was found (as `upsertShipments`, CTE `ship`) and the notifications they call
 * for, chosen in SQL. A shipment whose order is unknown is not written and
 * does not come back, nor does one older than its stored shipment. Built once
 * per set of fields (see `statement`).
 */
export function upsertShipmentsWithOrders(db: Executor, push: ShipmentsToWrite) {
  return upsertShipmentsWithOrdersStatement(db, push);
}

const upsertShipmentsWithOrdersStatement = statement(
  ({ shipments }: ShipmentsToWrite) => carriedColumns(shipments).join(),
  (db, value, { shipments }) => {
    const columns = ["external_id", ...carriedColumns(shipments)] as (keyof ShipmentsToWrite["shipments"][number])[];
    const storeId = value((args) => args.storeId);
    const written = db
      .with("ord", (qc) =>
        qc
          .selectFrom("orders")
          .select(["id", "customer_id", "external_id"])
          .where("store_id", "=", storeId)
          .where("external_id", "=", sql<string>`any(${value((args) => [...new Set(args.orderExternalIds)])}::text[])`)
          .orderBy("external_id")
          .forKeyShare(),
      )
      .with("ship", (qc) =>
        overTables(qc)
          .insertInto("shipments")
          .columns(["store_id", ...columns, "order_id"])
          .expression(
            unnestRows(
              [sql`${storeId}::bigint`],
              arrayColumns(value, shipmentTypes, columns, (args) => args.shipments),
              linkedByKey(value((args) => args.orderExternalIds), "ord"),
            ),
          )
          // Re-posting with another order re-links.
          .onConflict((oc) => oc.columns(["store_id", "external_id"]).doUpdateSet(shipmentMerge([...carriedColumns(shipments), "order_id"])).where(notStale("shipments")))
          .returningAll()
          .returning(wasInserted.as("inserted")),
      );
    return withTriggers(written, { tables: ["ship"] }, { id: storeId }, { backfill: value((args) => args.backfill) })
      .selectFrom("ship")
      .selectAll();
  },
);

/** What one shipment's push writes (see `upsertShipmentAlone`): the shipment, its order's external id, and whether it is a backfill. */
export type ShipmentAlone = { storeId: number; orderExternalId: string; shipment: Omit<ShipmentWrite, "order_id">; backfill: boolean };

/**
 * One shipment's push in one statement: its order found and locked by its
 * external id (CTE `ord`; none fails the statement with `order_or_fail`), the
 * shipment (as `upsertShipments`, CTE `ship`) and the notification it calls
 * for, chosen in SQL. A write older than the stored shipment fails the
 * statement with a stale write. Either way nothing of it stays. Built once
 * per set of the shipment's fields (see `statement`).
 */
export function upsertShipmentAlone(db: Executor, push: ShipmentAlone) {
  return onlyRow(upsertShipmentAloneStatement(db, push), "a shipment's statement");
}

const upsertShipmentAloneStatement = statement(
  ({ shipment }: ShipmentAlone) => Object.keys(shipment).join(),
  (db, value, { shipment }) => {
    const columns = Object.keys(shipment) as (keyof ShipmentAlone["shipment"])[];
    const row = rowValues(value, shipmentTypes, columns, (args) => args.shipment);
    const storeId = value((args) => args.storeId);
    const written = db
      .with("ord", (qc) =>
        qc
          .selectFrom("orders")
          .select(["id", "customer_id"])
          .where("store_id", "=", storeId)
          .where("external_id", "=", value((args) => args.orderExternalId))
          .forKeyShare(),
      )
      .with("ship", (qc) =>
        overTables(qc)
          .insertInto("shipments")
          .values({ store_id: storeId, ...row, order_id: sql<number>`order_or_fail((select id from ord))` } as Insertable<ShipmentTable>)
          // Re-posting with another order re-links.
          .onConflict((oc) => oc.columns(["store_id", "external_id"]).doUpdateSet(shipmentMerge([...columns.filter((column) => column !== "external_id"), "order_id"])).where(notStale("shipments")))
          .returningAll()
          .returning(wasInserted.as("inserted")),
      );
    return withTriggers(written, { tables: ["ship"] }, { id: storeId }, { backfill: value((args) => args.backfill) })
      .selectFrom(sql<{ one: number }>`(select 1)`.as("one"))
      .leftJoin("ship", (join) => join.onTrue())
      .selectAll("ship")
      .select(freshOrFail(sql<boolean>`ship.id is not null`).as("fresh"));
  },
);

export function findShipments(db: Executor, storeId: number, externalIds: readonly string[]) {
  if (externalIds.length === 0) return Promise.resolve([]);
  return db.selectFrom("shipments").selectAll().where("store_id", "=", storeId).where("external_id", "in", externalIds).execute();
}

/** A store's shipments with their orders' external ids, as they are read back (see `readBack`). */
export const shipmentRecords = (db: Executor, storeId: number) =>
  db.selectFrom("shipments as s").innerJoin("orders as o", "o.id", "s.order_id").selectAll("s").select("o.external_id as order_external_id").where("s.store_id", "=", storeId);
export type ShipmentRecordRow = Awaited<ReturnType<ReturnType<typeof shipmentRecords>["executeTakeFirstOrThrow"]>>;
