import type { Order, OrderInput, OrderPatch, OrderRecord } from "@commerce-ingest/shared";
import type { StoreContext } from "../../auth/store-context.js";
import { cancelRecoveriesForOrder, postPurchaseJobs, type TriggerOptions } from "../../automations/flows/index.js";
import { enqueueJobs } from "../../automations/jobs.repository.js";
import { inTransaction } from "../../db/transaction.js";
import type { Db, OrderRow } from "../../db/types.js";
import { AppError } from "../../errors.js";
import { formatMoney, toMoney } from "../../money.js";
import { unstorableText } from "../../text.js";
import { formatOptionalTimestamp, formatTimestamp } from "../../time.js";
import { upsertCustomerIn } from "../customers/customer.service.js";
import { orStored, presentOnly, sharedOptionalColumns, StaleWrite } from "../fields.js";
import * as repo from "./order.repository.js";


/** The stored order, read back (404 `Order not found` when there is none). */
export async function getOrder(db: Db, store: StoreContext, externalId: string): Promise<OrderRecord> {
  const row = unstorableText(externalId) ? undefined : await repo.findOrderRecord(db, store.id, externalId);
  if (!row) throw new AppError("ORDER_NOT_FOUND");
  return {
    ...toOrder(row),
    placed_at: formatTimestamp(row.placed_at),
    customer_external_id: row.customer_external_id,
    line_items: (row.line_items ?? null) as OrderRecord["line_items"],
    metadata: (row.metadata ?? null) as OrderRecord["metadata"],
    source_updated_at: formatOptionalTimestamp(row.source_updated_at),
    updated_at: formatTimestamp(row.updated_at),
  };
}

export function toOrder(row: OrderRow): Order {
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

/** The order and its embedded customer (upserted by the key rule and linked) in one transaction. */
export async function upsertOrder(
  db: Db,
  store: StoreContext,
  input: OrderInput,
  options: TriggerOptions,
): Promise<{ order: Order; created: boolean; stale: boolean }> {
  return orStored(
    () =>
      inTransaction(db, async (trx) => {
        // An embedded customer follows its order: the order's source time decides.
        const { row: customer, jobs } = await upsertCustomerIn(trx, store, { ...input.customer, source_updated_at: undefined }, options);
        const upserted = await repo.upsertOrder(trx, store.id, {
          external_id: input.external_id,
          customer_id: customer.id,
          placed_at: input.placed_at,
          total_price: toMoney(input.total_price),
          ...presentOnly({ financial_status: input.financial_status, fulfillment_status: input.fulfillment_status, source_updated_at: input.source_updated_at }),
          ...sharedOptionalColumns(input),
        });
        if (!upserted) throw new StaleWrite();
        const { inserted, ...row } = upserted;
        await cancelRecoveriesForOrder(trx, store, row, customer);
        await enqueueJobs(trx, [...jobs, ...postPurchaseJobs(store, row, inserted, options)]);
        return { order: toOrder(row), created: inserted };
      }),
    async () => {
      const row = await repo.findOrder(db, store.id, input.external_id);
      return row && { order: toOrder(row), created: false };
    },
  );
}

/** PATCH changes no field any automation reads, so it triggers nothing. */
export async function updateOrder(db: Db, store: StoreContext, externalId: string, patch: OrderPatch): Promise<{ order: Order; stale: boolean }> {
  const changes = {
    ...presentOnly({ financial_status: patch.financial_status, fulfillment_status: patch.fulfillment_status, source_updated_at: patch.source_updated_at }),
    ...sharedOptionalColumns({ tags: patch.tags, metadata: patch.metadata }),
  };
  // No stored order can have an id PostgreSQL cannot store.
  if (unstorableText(externalId)) throw new AppError("ORDER_NOT_FOUND");
  const row = await inTransaction(db, (trx) =>
    Object.keys(changes).length === 0 ? repo.findOrder(trx, store.id, externalId) : repo.updateOrder(trx, store.id, externalId, changes),
  );
  if (row) return { order: toOrder(row), stale: false };
  // Not changed: either there is no such order, or the patch is older than it.
  const stored = patch.source_updated_at === undefined ? undefined : await repo.findOrder(db, store.id, externalId);
  if (!stored) throw new AppError("ORDER_NOT_FOUND");
  return { order: toOrder(stored), stale: true };
}
