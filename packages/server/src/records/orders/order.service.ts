import type { Order, OrderInput, OrderPatch, OrderRecord } from "@commerce-ingest/shared";
import type { StoreContext } from "../../tenancy/store-context.js";
import type { TriggerOptions } from "../../automations/triggers.js";
import { olderThanStored } from "../../db/sql.js";
import { inStatement, inTransaction } from "../../db/transaction.js";
import type { Db } from "../../db/types.js";
import { AppError } from "../../errors.js";
import { formatMoney, toMoney } from "../../money.js";
import { unstorableText } from "../../text.js";
import { formatOptionalTimestamp, formatTimestamp } from "../../time.js";
import { customerWrite, embeddedInOneGroup, upsertEmbeddedCustomers } from "../customers/customer.service.js";
import { byShape, inOneGroup, inOneStatement, orStored, presentOnly, sharedOptionalColumns } from "../fields.js";
import { readBack } from "../read-back.js";
import * as repo from "./order.repository.js";


/** Orders read back with their customers' keys (404 `Order not found` for an unknown one). */
export const orderReadBack = readBack({ table: "orders", alias: "o", notFound: "ORDER_NOT_FOUND", rows: repo.orderRecords, toRecord: toOrderRecord });

function toOrderRecord(row: repo.OrderRecordRow): OrderRecord {
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

/** What an upsert writes of an order, linked to its customer; absent fields are left out, so they keep their stored value. */
function orderValues(input: OrderInput, customerId: number): repo.OrderValues {
  return { ...orderFields(input), customer_id: customerId };
}

/** The order's fields as an upsert writes them, its tags as a list. */
function orderFields(input: OrderInput): Omit<repo.OrderValues, "customer_id"> {
  return {
    external_id: input.external_id,
    placed_at: input.placed_at,
    total_price: toMoney(input.total_price),
    ...presentOnly({ financial_status: input.financial_status, fulfillment_status: input.fulfillment_status, source_updated_at: input.source_updated_at }),
    ...sharedOptionalColumns({ currency: input.currency, tags: input.tags, metadata: input.metadata, line_items: input.line_items }),
  };
}

/** An embedded customer follows its order: the order's source time decides, not the customer's. */
const embeddedCustomer = (input: OrderInput) => ({ ...input.customer, source_updated_at: undefined });

/**
 * The order and its embedded customer (upserted by the key rule and linked),
 * the recoveries it cancels and the jobs it calls for, in one statement: one
 * round trip, no transaction to open or commit.
 */
export async function upsertOrder(
  db: Db,
  store: StoreContext,
  input: OrderInput,
  options: TriggerOptions,
): Promise<{ order: Order; created: boolean; stale: boolean }> {
  return orStored(
    async () => {
      const { fresh: _fresh, inserted, ...row } = await inOneStatement(db, (db) =>
        repo.upsertOrderAlone(db, { storeId: store.id, writes: [customerWrite(embeddedCustomer(input))], order: orderFields(input), backfill: options.backfill }),
      );
      if (row.id === null) throw new Error("an order was not written");
      return { order: toOrder(row as repo.WrittenOrder), created: inserted === true };
    },
    async () => {
      const row = await repo.findOrder(db, store.id, input.external_id);
      return row && { order: toOrder(row), created: false };
    },
  );
}

/**
 * Many orders with distinct external_ids, in a constant number of statements
 * inside the caller's transaction (a batch): the customers, the orders (one
 * statement per set of fields sent), the recovery cancellations and the jobs.
 * Each order is stored and triggers as it would pushed alone (see
 * `upsertEmbeddedCustomers` for customers shared by several orders).
 */
export async function upsertOrders(
  db: Db,
  store: StoreContext,
  inputs: readonly OrderInput[],
  options: TriggerOptions,
): Promise<Array<{ order: Order; created: boolean; stale: boolean }>> {
  const orders = inOneGroup(byShape(inputs.map(orderFields), (write) => write, (write) => write.external_id), inputs);
  const customers = orders && embeddedInOneGroup(inputs, orders);
  // Orders with no source time, and their customers, of one set of fields each: nothing to check before writing
  // them, so one statement writes them all, atomic by itself (no transaction to open and commit).
  if (customers && orders) {
    const rows = await inStatement(db, (db) =>
      repo.upsertOrdersWithCustomers(db, { storeId: store.id, writes: customers.writes, orders, customerKeys: customers.keys, backfill: options.backfill }),
    );
    const written = new Map(rows.map((row) => [row.external_id, row]));
    return inputs.map((input) => {
      const row = written.get(input.external_id);
      if (!row) throw new Error("an order was not written");
      return { order: toOrder(row), created: row.inserted, stale: false };
    });
  }
  return inTransaction(db, async (trx) => {
    // A record older than the stored one is not applied: nothing of it is written, its customer included.
    const older = await olderThanStored(trx, "orders", store.id, inputs);
    const applied = inputs.filter((input) => !older.has(input.external_id));
    const customers = await upsertEmbeddedCustomers(trx, store, applied.map((input) => input.customer), options);
    const written = new Map<string, repo.WrittenOrder & { inserted: boolean }>();
    const writes = applied.map((input) => orderValues(input, customers.rowOf(input.customer).id));
    for (const group of byShape(writes, (write) => write, (write) => write.external_id)) {
      for (const row of await repo.upsertOrders(trx, { storeId: store.id, orders: group, backfill: options.backfill })) written.set(row.external_id, row);
    }
    const stale = new Map((await repo.findOrders(trx, store.id, inputs.map((input) => input.external_id).filter((id) => !written.has(id)))).map((row) => [row.external_id, row]));

    return inputs.map((input) => {
      const row = written.get(input.external_id);
      if (row) return { order: toOrder(row), created: row.inserted, stale: false };
      const stored = stale.get(input.external_id);
      if (!stored) throw new Error("an order was neither written nor found");
      return { order: toOrder(stored), created: false, stale: true };
    });
  });
}

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
