import type { Order, OrderInput, OrderPatch, OrderRecord } from "@commerce-ingest/shared";
import type { StoreContext } from "../../tenancy/store-context.js";
import { inStatement } from "../../db/transaction.js";
import type { Db } from "../../db/types.js";
import { AppError } from "../../errors.js";
import { formatMoney } from "../../money.js";
import { unstorableText } from "../../text.js";
import { formatTimestamp } from "../../time.js";
import { embeddingFields, writeEmbedding } from "../embedding.js";
import { presentOnly, sharedOptionalColumns } from "../fields.js";
import { embeddingRecord, readBack } from "../read-back.js";
import * as repo from "./order.repository.js";


/** Orders read back with their customers' keys (404 `Order not found` for an unknown one). */
export const orderReadBack = readBack({ table: "orders", alias: "o", notFound: "ORDER_NOT_FOUND", rows: repo.orderRecords, toRecord: toOrderRecord });

function toOrderRecord(row: repo.OrderRecordRow): OrderRecord {
  return { ...toOrder(row), placed_at: formatTimestamp(row.placed_at), ...embeddingRecord(row) };
}

export function toOrder(row: repo.WrittenOrder): Order {
  return {
    external_id: row.external_id,
    store_id: row.store_id,
    total_price: formatMoney(row.total_price),
    currency: row.currency,
    financial_status: row.financial_status,
    fulfillment_status: row.fulfillment_status,
    tags: row.tags,
    created_at: formatTimestamp(row.created_at),
  };
}

/** What an upsert writes of an order (see `embeddingFields`); absent fields are left out, so they keep their stored value. */
function orderFields(input: OrderInput): repo.OrderValues {
  return { ...embeddingFields(input), placed_at: input.placed_at, ...presentOnly({ financial_status: input.financial_status, fulfillment_status: input.fulfillment_status }) };
}

/**
 * Orders with distinct external_ids, each with its embedded customer, the
 * recoveries they cancel and the jobs they call for (contact syncs and
 * post-purchase), by the one write path (see `writeEmbedding`).
 */
export const upsertOrders = writeEmbedding({ table: "orders", fields: orderFields, write: repo.writeOrders, stored: repo.findOrders, toRecord: toOrder });

/** PATCH changes no field any automation reads, so it triggers nothing. */
export async function updateOrder(db: Db, store: StoreContext, externalId: string, patch: OrderPatch): Promise<{ order: Order; stale: boolean }> {
  const changes: repo.OrderChanges = {
    ...presentOnly({ financial_status: patch.financial_status, fulfillment_status: patch.fulfillment_status, source_updated_at: patch.source_updated_at }),
    ...sharedOptionalColumns({ tags: patch.tags, metadata: patch.metadata }),
  };
  // No stored order can have an id PostgreSQL cannot store.
  if (unstorableText(externalId)) throw new AppError("ORDER_NOT_FOUND");
  // One statement, atomic by itself: no transaction to open or commit.
  const row = Object.keys(changes).length === 0 ? await repo.findOrder(db, store.id, externalId) : await inStatement(db, (db) => repo.updateOrder(db, store.id, externalId, changes));
  if (row) return { order: toOrder(row), stale: false };
  // Not changed: either there is no such order, or the patch is older than it.
  const stored = patch.source_updated_at === undefined ? undefined : await repo.findOrder(db, store.id, externalId);
  if (!stored) throw new AppError("ORDER_NOT_FOUND");
  return { order: toOrder(stored), stale: true };
}
