import { sql, type Selectable } from "kysely";
import { answerColumns, arrayColumns, carriedColumns, mergedColumns, notStaleFor, now, rowValues, unnestRows, upsertRecords, wasInserted, written, writtenRows, statement, type ValueOf } from "../../db/sql.js";
import { withTriggers, WRITTEN } from "../../automations/triggers.js";
import { EMBEDDING_TYPES, embedding, type EmbeddingToWrite, type EmbeddingValues } from "../customers/customer.repository.js";
import type { Executor, OrderTable } from "../../db/types.js";

/**
 * The columns a write answers with: what the response, the triggers and the
 * recovery cancellation read. Not the line items, metadata and times nothing
 * reads back, which would only be sent, parsed and dropped.
 */
export const WRITTEN_ORDER = ["id", "store_id", "external_id", "customer_id", "placed_at", "total_price", "currency", "financial_status", "fulfillment_status", "tags", "created_at"] as const;
export type WrittenOrder = Pick<Selectable<OrderTable>, (typeof WRITTEN_ORDER)[number]>;

/** An order's write as plain values (see `EmbeddingValues`), for `writeOrders`. */
export type OrderValues = EmbeddingValues & { placed_at: string; financial_status?: string | null; fulfillment_status?: string | null };

/** The SQL type of each column an order's write can carry. */
const orderTypes: Record<keyof OrderValues, string> = { ...EMBEDDING_TYPES, placed_at: "timestamptz", financial_status: "text", fulfillment_status: "text" };

/** The orders one statement writes (see `EmbeddingToWrite`). */
export type OrdersToWrite = EmbeddingToWrite<OrderValues>;

/** What a statement wrote of an order, and whether it created it. */
export type WrittenOrderRow = WrittenOrder & { inserted: boolean };

/**
 * Writes orders in one statement, atomic by itself, whichever entry they came
 * from (a push is a set of one): their customers and contacts when they carry
 * them (see `embedding`), the orders (CTE `ord`; rows passed as one array per
 * column, `unnest`, so the same text serves any number), the recoveries they
 * cancel and the jobs they call for (contact syncs and post-purchase), chosen
 * in SQL (see `withTriggers`). Built once per set of fields and planning size
 * (see `statement`).
 */
export async function writeOrders(db: Executor, push: OrdersToWrite): Promise<WrittenOrderRow[]> {
  return push.records.length === 0 ? [] : written(await writeOrdersStatement(db, push));
}

const writeOrdersStatement = statement(
  (db, value: ValueOf<OrdersToWrite>, { writes, records, statusesOnly }) => {
    const columns = ["external_id", ...carriedColumns(records)] as (keyof OrderValues)[];
    const store = { id: value((args) => args.storeId) };
    const { base, linked, link, tables } = embedding(db, value, writes);
    const rows = unnestRows([sql`${store.id}::bigint`], arrayColumns(value, orderTypes, columns, (args) => args.records, records.length === 1), link);
    const ord = base.with(WRITTEN.orders, (qc) =>
      upsertRecords(qc, "orders", ["store_id", ...columns, ...linked], rows, mergedColumns("orders", [...carriedColumns(records), ...linked]))
        .returning(WRITTEN_ORDER)
        .returning(wasInserted.as("inserted")),
    );
    const alone = writes !== undefined && records.length === 1;
    return withTriggers(ord, { tables: [...tables, WRITTEN.orders], orders: records.length, alone }, store, { backfill: value((args) => args.backfill) })
      .selectFrom(writtenRows<WrittenOrderRow, OrdersToWrite>(value, WRITTEN.orders, (args) => args.records.length))
      .select(answerColumns(WRITTEN_ORDER, statusesOnly));
  },
);

export function findOrder(db: Executor, storeId: number, externalId: string) {
  return db.selectFrom("orders").selectAll().where("store_id", "=", storeId).where("external_id", "=", externalId).executeTakeFirst();
}

export function findOrders(db: Executor, storeId: number, externalIds: readonly string[]) {
  if (externalIds.length === 0) return Promise.resolve([]);
  return db.selectFrom("orders").select(WRITTEN_ORDER).where("store_id", "=", storeId).where("external_id", "in", externalIds).execute();
}

/** What a PATCH changes of an order (its tags as a list); absent fields are left out, so they keep their stored value. */
export type OrderChanges = Partial<Pick<OrderValues, "financial_status" | "fulfillment_status" | "tags" | "metadata" | "source_updated_at">>;

/**
 * Applies a PATCH to the order, in one statement (atomic by itself); nothing
 * comes back when there is no such order or the patch is older than it.
 * Built once per set of fields changed (see `statement`).
 */
export async function updateOrder(db: Executor, storeId: number, externalId: string, changes: OrderChanges) {
  const [row] = await updateOrderStatement(db, { storeId, externalId, changes });
  return row;
}

const updateOrderStatement = statement(
  (db, value: ValueOf<{ storeId: number; externalId: string; changes: OrderChanges }>, { changes }) => {
    const columns = Object.keys(changes) as (keyof OrderChanges)[];
    const set = rowValues(value, orderTypes, columns, (args) => args.changes);
    return db
      .updateTable("orders")
      .set({ ...set, updated_at: now() })
      .where("store_id", "=", value((args) => args.storeId))
      .where("external_id", "=", value((args) => args.externalId))
      .where(notStaleFor(columns.includes("source_updated_at") ? value((args) => args.changes.source_updated_at) : undefined))
      .returningAll();
  },
);

/** A store's orders with their customers' keys, as they are read back (see `readBack`). */
export const orderRecords = (db: Executor, storeId: number) =>
  db.selectFrom("orders as o").leftJoin("customers as cu", "cu.id", "o.customer_id").selectAll("o").select("cu.external_id as customer_external_id").where("o.store_id", "=", storeId);
export type OrderRecordRow = Awaited<ReturnType<ReturnType<typeof orderRecords>["executeTakeFirstOrThrow"]>>;
