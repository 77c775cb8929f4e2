import type { ShipmentStatus } from "@commerce-ingest/shared";
import { sql, type QueryCreator } from "kysely";
import { withTriggers, WRITTEN } from "../../automations/triggers.js";
import { answerColumns, arrayColumns, carriedColumns, linkedByKey, mergedColumns, unnestRows, upsertRecords, wasInserted, written, writtenRows, statement, type ValueOf } from "../../db/sql.js";
import type { Database, Executor, ShipmentRow, Trx } from "../../db/types.js";

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
  (db, value: ValueOf<{ storeId: number; externalIds: readonly string[] }>) =>
    db
      .selectFrom("orders")
      .select(["id", "customer_id", "external_id"])
      .where("store_id", "=", value((args) => args.storeId))
      .where("external_id", "=", sql<string>`any(${value((args) => args.externalIds)}::text[])`)
      .orderBy("external_id")
      .forKeyShare(),
);

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
 * The shipments one statement writes: of one set of fields, with distinct
 * keys, and either each with its order's external id (`orderExternalIds`),
 * found by the statement, or each linked to its order (`order_id`).
 * `strict`: a shipment not written (older than its stored one, or its order
 * unknown) fails the whole statement (a stale write); otherwise it is left out.
 */
export type ShipmentsToWrite = {
  storeId: number;
  shipments: readonly ShipmentValues[];
  orderExternalIds?: readonly string[];
  backfill: boolean;
  strict: boolean;
  /** Each shipment's id, key and `inserted` answered, no more (see `answerColumns`). */
  statusesOnly?: true | undefined;
};

/** A shipment's write as plain values; its order's id only when the statement does not find it. */
export type ShipmentValues = Omit<ShipmentWrite, "order_id"> & { order_id?: number };

/**
 * The columns a write answers with: the response's, and the id. Not the
 * metadata and times, which nothing after the statement reads.
 */
export const WRITTEN_SHIPMENT = ["id", "store_id", "external_id", "order_id", "tracking_number", "tracking_url", "carrier", "status"] as const;
export type WrittenShipment = Pick<ShipmentRow, (typeof WRITTEN_SHIPMENT)[number]>;
/** What a statement wrote of a shipment, and whether it created it. */
export type WrittenShipmentRow = WrittenShipment & { inserted: boolean };

/**
 * Writes shipments in one statement, atomic by itself, whichever entry they
 * came from (a push is a set of one): their orders found and locked by
 * external id when they name them (CTE `ord`, in key order), the shipments
 * (CTE `ship`; re-posting with another order re-links; `status_changed` says
 * whether the write changed the status) and the notifications they call for,
 * chosen in SQL (see `withTriggers`). Built once per set of fields (see `statement`).
 */
export async function writeShipments(db: Executor, push: ShipmentsToWrite): Promise<WrittenShipmentRow[]> {
  return push.shipments.length === 0 ? [] : written(await writeShipmentsStatement(db, push));
}

const writeShipmentsStatement = statement(
  (db, value: ValueOf<ShipmentsToWrite>, { shipments, orderExternalIds, statusesOnly }) => {
    const columns = ["external_id", ...carriedColumns(shipments)] as (keyof ShipmentValues)[];
    const storeId = value((args) => args.storeId);
    const found = orderExternalIds !== undefined;
    const orderId = found ? (["order_id"] as const) : [];
    const base: QueryCreator<Database> = found
      ? (db.with("linked_order", (qc) =>
          qc
            .selectFrom("orders")
            .select(["id", "customer_id", "external_id"])
            .where("store_id", "=", storeId)
            .where("external_id", "=", sql<string>`any(${value((args) => [...new Set(args.orderExternalIds)])}::text[])`)
            .orderBy("external_id")
            .forKeyShare(),
        ) as unknown as QueryCreator<Database>)
      : db;
    const rows = unnestRows(
      [sql`${storeId}::bigint`],
      arrayColumns(value, shipmentTypes, columns, (args) => args.shipments, shipments.length === 1),
      found ? linkedByKey(value((args) => args.orderExternalIds), "linked_order") : {},
    );
    const written = base.with(WRITTEN.shipments, (qc) =>
      upsertRecords(qc, "shipments", ["store_id", ...columns, ...orderId], rows, shipmentMerge([...carriedColumns(shipments), ...orderId]))
        .returningAll()
        .returning(wasInserted.as("inserted")),
    );
    return withTriggers(written, { tables: [WRITTEN.shipments] }, { id: storeId }, { backfill: value((args) => args.backfill) })
      .selectFrom(writtenRows<WrittenShipmentRow, ShipmentsToWrite>(value, WRITTEN.shipments, (args) => args.shipments.length))
      .select(answerColumns(WRITTEN_SHIPMENT, statusesOnly));
  },
);

/** What a shipment's upsert sets on a stored one: the fields it carries, and whether its status changed. */
function shipmentMerge(columns: readonly string[]) {
  return {
    ...mergedColumns("shipments", columns),
    status_changed: columns.includes("status") ? sql<boolean>`shipments.status is distinct from excluded.status` : sql<boolean>`false`,
  };
}

export function findShipments(db: Executor, storeId: number, externalIds: readonly string[]) {
  if (externalIds.length === 0) return Promise.resolve([]);
  return db.selectFrom("shipments").selectAll().where("store_id", "=", storeId).where("external_id", "in", externalIds).execute();
}

/** A store's shipments with their orders' external ids, as they are read back (see `readBack`). */
export const shipmentRecords = (db: Executor, storeId: number) =>
  db.selectFrom("shipments as s").innerJoin("orders as o", "o.id", "s.order_id").selectAll("s").select("o.external_id as order_external_id").where("s.store_id", "=", storeId);
export type ShipmentRecordRow = Awaited<ReturnType<ReturnType<typeof shipmentRecords>["executeTakeFirstOrThrow"]>>;
