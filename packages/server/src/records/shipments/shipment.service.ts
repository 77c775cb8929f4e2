import type { Shipment, ShipmentInput, ShipmentRecord } from "@commerce-ingest/shared";
import { formatOptionalTimestamp, formatTimestamp } from "../../time.js";
import type { StoreContext } from "../../tenancy/store-context.js";
import type { TriggerOptions } from "../../automations/triggers.js";
import { isOrderMissingError } from "../../db/sql.js";
import { inStatement, inTransaction } from "../../db/transaction.js";
import type { Db, ShipmentRow } from "../../db/types.js";
import { AppError } from "../../errors.js";
import { byShape, inOneGroup, inOneStatement, orStored, presentOnly, sharedOptionalColumns } from "../fields.js";
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

export function toShipment(row: ShipmentRow): Shipment {
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

/** What an upsert writes of a shipment, linked to its order; absent fields are left out, so they keep their stored value. */
function shipmentWrite(input: ShipmentInput, orderId: number): repo.ShipmentWrite {
  return { ...shipmentFields(input), order_id: orderId };
}

function shipmentFields(input: ShipmentInput): Omit<repo.ShipmentWrite, "order_id"> {
  return {
    external_id: input.external_id,
    ...presentOnly({
      tracking_number: input.tracking_number,
      tracking_url: input.tracking_url,
      carrier: input.carrier,
      status: input.status,
      source_updated_at: input.source_updated_at,
    }),
    ...sharedOptionalColumns({ metadata: input.metadata }),
  };
}

/**
 * The shipment, linked to its order, and the notification it calls for, in one
 * statement: one round trip, no transaction to open or commit.
 */
export async function upsertShipment(
  db: Db,
  store: StoreContext,
  input: ShipmentInput,
  options: TriggerOptions,
): Promise<{ shipment: Shipment; created: boolean; stale: boolean }> {
  try {
    return await orStored(
      async () => {
        const { fresh: _fresh, inserted, ...row } = await inOneStatement(db, (db) =>
          repo.upsertShipmentAlone(db, { storeId: store.id, orderExternalId: input.order_external_id, shipment: shipmentFields(input), backfill: options.backfill }),
        );
        if (row.id === null) throw new Error("a shipment was not written");
        return { shipment: toShipment(row as ShipmentRow), created: inserted === true };
      },
      async () => {
        const row = await repo.findShipment(db, store.id, input.external_id);
        return row && { shipment: toShipment(row), created: false };
      },
    );
  } catch (error) {
    if (isOrderMissingError(error)) throw orderNotFound();
    throw error;
  }
}

/**
 * Many shipments with distinct external_ids, in a constant number of
 * statements inside the caller's transaction (a batch): their orders, the
 * shipments (one statement per set of fields sent), the stale ones read back
 * and the jobs. Each is stored and triggers as it would pushed alone; one
 * whose order is unknown is refused, as it would be alone.
 */
export async function upsertShipments(
  db: Db,
  store: StoreContext,
  inputs: readonly ShipmentInput[],
  options: TriggerOptions,
): Promise<Array<{ shipment: Shipment; created: boolean; stale: boolean } | AppError>> {
  const only = inOneGroup(byShape(inputs.map(shipmentFields), (write) => write, (write) => write.external_id), inputs);
  // Shipments with no source time, of one set of fields: nothing to check before writing them, so one statement
  // finds their orders and writes them all, atomic by itself (no transaction to open and commit). Not written,
  // a shipment could not be stale (it carries no source time): its order is unknown.
  if (only) {
    const orderOf = new Map(inputs.map((input) => [input.external_id, input.order_external_id]));
    const rows = await inStatement(db, (db) =>
      repo.upsertShipmentsWithOrders(db, { storeId: store.id, shipments: only, orderExternalIds: only.map((shipment) => orderOf.get(shipment.external_id) ?? ""), backfill: options.backfill }),
    );
    const written = new Map(rows.map((row) => [row.external_id, row]));
    return inputs.map((input) => {
      const row = written.get(input.external_id);
      return row ? { shipment: toShipment(row), created: row.inserted, stale: false } : orderNotFound();
    });
  }
  return inTransaction(db, async (trx) => {
    const orders = await repo.findOrders(trx, store.id, inputs.map((input) => input.order_external_id));
    const linked = inputs.flatMap((input) => {
      const order = orders.get(input.order_external_id);
      return order ? [{ input, order }] : [];
    });
    const written = new Map<string, ShipmentRow & { inserted: boolean }>();
    const writes = linked.map(({ input, order }) => shipmentWrite(input, order.id));
    for (const group of byShape(writes, (write) => write, (write) => write.external_id)) {
      for (const row of await repo.upsertShipments(trx, { storeId: store.id, shipments: group, backfill: options.backfill })) written.set(row.external_id, row);
    }
    const stale = new Map((await repo.findShipments(trx, store.id, linked.map(({ input }) => input.external_id).filter((id) => !written.has(id)))).map((row) => [row.external_id, row]));
    return inputs.map((input) => {
      if (!orders.has(input.order_external_id)) return orderNotFound();
      const row = written.get(input.external_id);
      if (row) return { shipment: toShipment(row), created: row.inserted, stale: false };
      const stored = stale.get(input.external_id);
      if (!stored) throw new Error("a shipment was neither written nor found");
      return { shipment: toShipment(stored), created: false, stale: true };
    });
  });
}
