import type { Order, OrderInput, OrderPatch } from "@commerce-ingest/shared";
import type { StoreContext } from "../../auth/store-context.js";
import { cancelRecoveriesForOrder, postPurchaseJobs, type TriggerOptions } from "../../automations/flows/index.js";
import { enqueueJobs } from "../../automations/jobs.repository.js";
import { inTransaction } from "../../db/transaction.js";
import type { Db, OrderRow } from "../../db/types.js";
import { AppError } from "../../errors.js";
import { formatMoney, toMoney } from "../../money.js";
import { unstorableText } from "../../text.js";
import { formatTimestamp } from "../../time.js";
import { upsertCustomerIn } from "../customers/customer.service.js";
import { presentOnly, sharedOptionalColumns } from "../fields.js";
import * as repo from "./order.repository.js";

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
): Promise<{ order: Order; created: boolean }> {
  return inTransaction(db, async (trx) => {
    const { row: customer, jobs } = await upsertCustomerIn(trx, store, input.customer, options);
    const { inserted, ...row } = await repo.upsertOrder(trx, store.id, {
      external_id: input.external_id,
      customer_id: customer.id,
      placed_at: input.placed_at,
      total_price: toMoney(input.total_price),
      ...presentOnly({ financial_status: input.financial_status, fulfillment_status: input.fulfillment_status }),
      ...sharedOptionalColumns(input),
    });
    await cancelRecoveriesForOrder(trx, store, row, customer);
    await enqueueJobs(trx, [...jobs, ...postPurchaseJobs(store, row, inserted, options)]);
    return { order: toOrder(row), created: inserted };
  });
}

/** PATCH changes no field any automation reads, so it triggers nothing. */
export async function updateOrder(db: Db, store: StoreContext, externalId: string, patch: OrderPatch): Promise<Order> {
  const changes = {
    ...presentOnly({ financial_status: patch.financial_status, fulfillment_status: patch.fulfillment_status }),
    ...sharedOptionalColumns({ tags: patch.tags, metadata: patch.metadata }),
  };
  // No stored order can have an id PostgreSQL cannot store.
  if (unstorableText(externalId)) throw new AppError("ORDER_NOT_FOUND");
  const row = await inTransaction(db, (trx) =>
    Object.keys(changes).length === 0 ? repo.findOrder(trx, store.id, externalId) : repo.updateOrder(trx, store.id, externalId, changes),
  );
  if (!row) throw new AppError("ORDER_NOT_FOUND");
  return toOrder(row);
}
