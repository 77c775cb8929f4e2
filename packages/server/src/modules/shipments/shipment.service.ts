import type { Shipment, ShipmentInput, ShipmentRecord } from "@commerce-ingest/shared";
import { unstorableText } from "../../text.js";
import { formatOptionalTimestamp, formatTimestamp } from "../../time.js";
import type { StoreContext } from "../../auth/store-context.js";
import { shippingNotificationJobs, type TriggerOptions } from "../../automations/flows/index.js";
import { enqueueJobs } from "../../automations/jobs.repository.js";
import { inTransaction } from "../../db/transaction.js";
import type { Db, ShipmentRow } from "../../db/types.js";
import { AppError } from "../../errors.js";
import { orStored, presentOnly, sharedOptionalColumns, StaleWrite } from "../fields.js";
import * as repo from "./shipment.repository.js";

/** The stored shipment, read back with its order's external id (404 `Shipment not found` when there is none). */
export async function getShipment(db: Db, store: StoreContext, externalId: string): Promise<ShipmentRecord> {
  const row = unstorableText(externalId) ? undefined : await repo.findShipmentRecord(db, store.id, externalId);
  if (!row) throw new AppError("SHIPMENT_NOT_FOUND");
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

export async function upsertShipment(
  db: Db,
  store: StoreContext,
  input: ShipmentInput,
  options: TriggerOptions,
): Promise<{ shipment: Shipment; created: boolean; stale: boolean }> {
  return orStored(() => writeShipment(db, store, input, options), async () => {
    const row = await repo.findShipment(db, store.id, input.external_id);
    return row && { shipment: toShipment(row), created: false };
  });
}

function writeShipment(db: Db, store: StoreContext, input: ShipmentInput, options: TriggerOptions): Promise<{ shipment: Shipment; created: boolean }> {
  return inTransaction(db, async (trx) => {
    const order = await repo.findOrder(trx, store.id, input.order_external_id);
    if (!order) {
      throw new AppError("SHIPMENT_ORDER_NOT_FOUND", [
        { path: "order_external_id", message: "no order of this store has this external_id" },
      ]);
    }
    const upserted = await repo.upsertShipment(trx, store.id, {
      external_id: input.external_id,
      order_id: order.id,
      ...presentOnly({
        tracking_number: input.tracking_number,
        tracking_url: input.tracking_url,
        carrier: input.carrier,
        status: input.status,
        source_updated_at: input.source_updated_at,
      }),
      ...sharedOptionalColumns({ metadata: input.metadata }),
    });
    if (!upserted) throw new StaleWrite();
    const { inserted, ...row } = upserted;
    await enqueueJobs(trx, shippingNotificationJobs(store, row, order.customer_id, options));
    return { shipment: toShipment(row), created: inserted };
  });
}
