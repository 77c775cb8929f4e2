import { type Shipment, type ShipmentInput, type ShipmentRecord, shipmentInputSchema, shipmentSchema } from "@commerce-ingest/shared";
import { formatOptionalTimestamp, formatTimestamp } from "../../db/sql.js";
import type { StoreContext } from "../../tenancy/access.js";
import type { Db } from "../../db/types.js";
import { AppError } from "../../errors.js";
import type { Upserted, WriteOptions } from "../calls.js";
import { byShape, onlyGroup, presentOnly, sharedOptionalColumns, inGroups, writeRecords, upsertSpec } from "../write-path.js";
import { readBack } from "../read-back.js";
import * as repo from "./shipment.repository.js";

/** Shipments read back with their orders' external ids (404 `Shipment not found` for an unknown one). */
export const shipmentReadBack = readBack({ table: "shipments", alias: "s", notFound: "SHIPMENT_NOT_FOUND", rows: repo.shipmentRecords, toRecord: toShipmentRecord });

function toShipmentRecord(row: repo.ShipmentRecordRow): ShipmentRecord {
  return {
    ...toShipment(row),
    order_external_id: row.order_external_id,
    metadata: (row.metadata ?? null) as ShipmentRecord["metadata"],
    source_updated_at: formatOptionalTimestamp(row.source_updated_at),
    created_at: formatTimestamp(row.created_at),
    updated_at: formatTimestamp(row.updated_at),
  };
}

export function toShipment(row: repo.WrittenShipment): Shipment {
  return {
    external_id: row.external_id,
    store_id: row.store_id,
    order_id: row.order_id,
    tracking_number: row.tracking_number,
    tracking_url: row.tracking_url,
    carrier: row.carrier,
    status: row.status,
  };
}

const orderNotFound = () =>
  new AppError("SHIPMENT_ORDER_NOT_FOUND", [{ path: "order_external_id", message: "no order of this store has this external_id" }]);

/** What an upsert writes of a shipment; absent fields are left out, so they keep their stored value. */
function shipmentFields(input: ShipmentInput): repo.ShipmentValues {
  const fields: repo.ShipmentValues = { external_id: input.external_id };
  presentOnly(
    { tracking_number: input.tracking_number, tracking_url: input.tracking_url, carrier: input.carrier, status: input.status, source_updated_at: input.source_updated_at },
    fields,
  );
  return sharedOptionalColumns({ metadata: input.metadata }, fields);
}

/**
 * Shipments with distinct external_ids, each linked to its order, and the
 * notifications they call for, by the one write path (see `writeRecords`): in
 * one statement that finds their orders when they are of one set of fields;
 * otherwise in a transaction, their orders found and locked first. One whose
 * order is unknown is refused, as it would be pushed alone.
 */
export function upsertShipments(db: Db, store: StoreContext, inputs: readonly ShipmentInput[], options: WriteOptions): Promise<Array<Upserted<Shipment> | AppError>> {
  const shipments = onlyGroup(byShape(inputs.map(shipmentFields), (write) => write, (write) => write.external_id));
  const orderOf = new Map(inputs.map((input) => [input.external_id, input.order_external_id]));
  const write = { storeId: store.id, backfill: options.backfill, statusesOnly: options.statusesOnly };
  return writeRecords(db, {
    keys: inputs.map((input) => input.external_id),
    together:
      shipments &&
      ((db) => repo.writeShipments(db, { ...write, shipments, orderExternalIds: shipments.map((shipment) => orderOf.get(shipment.external_id) ?? ""), strict: true })),
    separately: async (trx) => {
      const orders = await repo.findOrders(trx, store.id, inputs.map((input) => input.order_external_id));
      const linked = inputs.flatMap((input) => {
        const order = orders.get(input.order_external_id);
        return order ? [{ ...shipmentFields(input), order_id: order.id }] : [];
      });
      const written = await inGroups(linked, (shipment) => shipment.external_id, (shipments) => repo.writeShipments(trx, { ...write, shipments, strict: false }));
      const refused = new Map(inputs.flatMap((input) => (orders.has(input.order_external_id) ? [] : [[input.external_id, orderNotFound()] as const])));
      return { written, refused };
    },
    stored: (db, keys) => repo.findShipments(db, store.id, keys),
    keyOf: (row) => row.external_id,
    toRecord: toShipment,
    statusesOnly: options.statusesOnly,
  });
}

/** How shipments are written: a push, a batch and an import's lines alike. */
export const shipmentWrite = upsertSpec({
  resource: "shipments",
  body: shipmentInputSchema,
  phonePaths: [],
  example: {
    external_id: "shp-1001-1",
    order_external_id: "1001",
    carrier: "UPS",
    tracking_number: "1Z999AA10123456784",
    tracking_url: "https://www.ups.com/track?tracknum=1Z999AA10123456784",
    status: "in_transit",
  },
  output: shipmentSchema,
  touches: (shipment) => [`shipments:${shipment.external_id}`, `orders:${shipment.order_external_id}`],
  errors: ["SHIPMENT_ORDER_NOT_FOUND"],
  write: (call, bodies) => upsertShipments(call.db, call.store, bodies, call.options),
});
