import { type CustomerInput, type Order, type OrderInput, type OrderPatch, type OrderRecord, orderInputSchema, orderSchema } from "@commerce-ingest/shared";
import type { StoreContext } from "../../tenancy/access.js";
import { inStatement, olderThanStored, formatMoney, toMoney, formatTimestamp } from "../../db/sql.js";
import type { Db, Executor } from "../../db/types.js";
import { AppError } from "../../errors.js";
import { unstorableText } from "../../text.js";
import type { Upserted, WriteOptions } from "../calls.js";
import { byShape, inGroups, onlyGroup, presentOnly, sharedOptionalColumns, upsertSpec, writeRecords, type SharedOptional } from "../write-path.js";
import { embeddingRecord, readBack } from "../read-back.js";
import type * as customerRepo from "../customers/customer.repository.js";
import { customerTouches, embeddedInOneGroup, upsertEmbeddedCustomers } from "../customers/customer.service.js";
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
  return presentOnly({ financial_status: input.financial_status, fulfillment_status: input.fulfillment_status }, embeddingFields(input, { placed_at: input.placed_at }));
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

/** How orders are written: a push, a batch and an import's lines alike. */
export const orderWrite = upsertSpec({
  resource: "orders",
  body: orderInputSchema,
  phonePaths: [["customer", "phone"]],
  example: {
    external_id: "1001",
    placed_at: "2026-11-20T14:03:00Z",
    total_price: 129.9,
    currency: "USD",
    financial_status: "paid",
    fulfillment_status: null,
    customer: { external_id: "c-1001", phone: "+14155552671", first_name: "Ada", last_name: "Lovelace", email: "ada@example.com" },
    line_items: [{ sku: "TEE-BLK-M", title: "T-shirt", quantity: 2, price: 64.95 }],
    tags: ["web"],
    metadata: { channel: "online_store" },
  },
  output: orderSchema,
  touches: (order) => [`orders:${order.external_id}`, ...customerTouches(order.customer)],
  write: (call, bodies) => upsertOrders(call.db, call.store, bodies, call.options),
});

/*
 * How orders and checkouts are written: each record with the customer it
 * embeds (upserted by the customer key rule, and linked), in one statement or
 * one transaction, by the one write path (see `writeRecords`).
 */

/**
 * How a resource whose records embed their customer (orders, checkouts)
 * writes them (see `writeEmbedding`): its table, what an upsert writes of a
 * record, its one statement (see `EmbeddingToWrite`), how the stored records
 * are read, and how a row is answered.
 */
export type Embedding<Input, Values, Row, Record> = {
  table: "orders" | "checkouts";
  fields: (input: Input) => Values;
  write: (db: Executor, push: customerRepo.EmbeddingToWrite<Values> & { recoveryDelaySeconds: number }) => Promise<Array<Row & { inserted: boolean }>>;
  stored: (db: Executor, storeId: number, keys: readonly string[]) => Promise<readonly Row[]>;
  toRecord: (row: Row) => Record;
};

type Embeds = { external_id: string; customer: CustomerInput; source_updated_at?: string | undefined };

/**
 * What an upsert writes of any record that embeds its customer (see `EmbeddingValues`), then its resource's own
 * fields (`own`, its required ones, and whatever the caller sets after): absent fields are left out, so they keep
 * their stored value. One object, its fields set in that order (a record's shape is its fields' order).
 */
export function embeddingFields<Own extends object>(input: Embeds & { total_price: number } & SharedOptional, own: Own): customerRepo.EmbeddingValues & Own {
  const fields: customerRepo.EmbeddingValues = { external_id: input.external_id, total_price: toMoney(input.total_price) };
  if (input.source_updated_at !== undefined) fields.source_updated_at = input.source_updated_at;
  sharedOptionalColumns(input, fields);
  return Object.assign(fields, own);
}

/**
 * Records that embed their customer, with distinct external_ids, each with its
 * customer (upserted by the key rule and linked) and what they trigger, by the
 * one write path (see `writeRecords`): a push (a set of one), pushes
 * gathered, a batch or an import's chunk. In one statement with their
 * customers when both are of one set of fields each; otherwise in a
 * transaction: the stale records left out (their customers too), the
 * customers once each (see `upsertEmbeddedCustomers`), then the records.
 */
export function writeEmbedding<Input extends Embeds, Values extends { external_id: string }, Row extends { external_id: string }, Record>(
  embedding: Embedding<Input, Values, Row, Record>,
): (db: Db, store: StoreContext, inputs: readonly Input[], options: WriteOptions) => Promise<Array<Upserted<Record> | AppError>> {
  const { table, fields, write, stored, toRecord } = embedding;
  return (db, store, inputs, options) => {
    const records = onlyGroup(byShape(inputs.map(fields), (record) => record, (record) => record.external_id));
    const customers = records && embeddedInOneGroup(inputs, records);
    const push = { storeId: store.id, backfill: options.backfill, recoveryDelaySeconds: store.recoveryDelaySeconds, statusesOnly: options.statusesOnly };
    return writeRecords(db, {
      keys: inputs.map((input) => input.external_id),
      together: customers && records && ((db) => write(db, { records, writes: customers.writes, customerKeys: customers.keys, strict: true, ...push })),
      separately: async (trx) => {
        // A record older than the stored one is not applied: nothing of it is written, its customer included.
        const older = await olderThanStored(trx, table, store.id, inputs);
        const applied = inputs.filter((input) => !older.has(input.external_id));
        const customers = await upsertEmbeddedCustomers(trx, store, applied.map((input) => input.customer), options);
        const linked = applied.map((input) => ({ ...fields(input), customer_id: customers.rowOf(input.customer).id }));
        return { written: await inGroups(linked, (record) => record.external_id, (records) => write(trx, { ...push, records, strict: false })) };
      },
      stored: (db, keys) => stored(db, store.id, keys),
      keyOf: (row) => row.external_id,
      toRecord,
      statusesOnly: options.statusesOnly,
    });
  };
}
