import { sql, type QueryCreator, type Selectable } from "kysely";
import { allWritten, arrayColumns, carriedColumns, freshOrFail, linkedByKey, mergedColumns, notStale, notStaleFor, now, overTables, rowValues, unnestRows, wasInserted } from "../../db/sql.js";
import { MOST_ORDERS_BY_ID } from "../../automations/flows/checkout-recovery.js";
import { withTriggers } from "../../automations/triggers.js";
import { fieldsOf, withCustomers, type CustomerWrite, type CustomersToWrite } from "../customers/customer.repository.js";
import { statement, type ValueOf } from "../../db/statement.js";
import type { Database, Executor, OrderTable } from "../../db/types.js";
import type { SharedOptionalColumns } from "../fields.js";

export type OrderWrite = {
  external_id: string;
  customer_id: number;
  placed_at: string;
  total_price: string;
  financial_status?: string | null;
  fulfillment_status?: string | null;
  source_updated_at?: string;
} & SharedOptionalColumns;

/**
 * The columns a write answers with: what the response, the triggers and the
 * recovery cancellation read. Not the line items, metadata and times nothing
 * reads back, which would only be sent, parsed and dropped.
 */
export const WRITTEN_ORDER = ["id", "store_id", "external_id", "customer_id", "placed_at", "total_price", "currency", "financial_status", "fulfillment_status", "tags", "created_at"] as const;
export type WrittenOrder = Pick<Selectable<OrderTable>, (typeof WRITTEN_ORDER)[number]>;

/** An order's write as plain values (its tags as a list), for `writeOrders`; its customer's id only when that is stored already. */
export type OrderValues = Omit<OrderWrite, "tags" | "customer_id"> & { customer_id?: number; tags?: readonly string[] };

/** The SQL type of each column an order's write can carry. */
const orderTypes: Record<keyof OrderValues, string> = {
  external_id: "text",
  customer_id: "bigint",
  placed_at: "timestamptz",
  total_price: "numeric",
  currency: "text",
  financial_status: "text",
  fulfillment_status: "text",
  source_updated_at: "timestamptz",
  tags: "text[]",
  metadata: "jsonb",
  line_items: "jsonb",
};

/**
 * The orders one statement writes: of one set of fields, with distinct keys,
 * and either their customers with them (`writes`, as `upsertCustomers` takes
 * them, and each order's customer key in `customerKeys`) or each linked to a
 * stored customer (`customer_id`). `strict`: an order older than its stored
 * one fails the whole statement (a stale write), so that nothing of it stays,
 * its customers included; otherwise it is left out and the rest written.
 */
export type OrdersToWrite = {
  storeId: number;
  orders: readonly OrderValues[];
  writes?: readonly CustomerWrite[];
  customerKeys?: readonly string[];
  backfill: boolean;
  strict: boolean;
};

/** What a statement wrote of an order, and whether it created it. */
export type WrittenOrderRow = WrittenOrder & { inserted: boolean };

/**
 * Writes orders in one statement, atomic by itself, whichever entry they came
 * from (a push is a set of one): their customers and contacts when they carry
 * them (as `upsertCustomers` writes them, CTE `customer`), the orders (CTE
 * `ord`; rows passed as one array per column, `unnest`, so the same text
 * serves any number), the recoveries they cancel and the jobs they call for
 * (contact syncs and post-purchase), chosen in SQL (see `withTriggers`).
 * Built once per set of fields and planning size (see `statement`).
 */
export async function writeOrders(db: Executor, push: OrdersToWrite): Promise<WrittenOrderRow[]> {
  if (push.orders.length === 0) return [];
  const rows = await writeOrdersStatement(db, push);
  return rows.filter((row): row is typeof row & WrittenOrderRow => row.id !== null);
}

/** How an order statement's recovery cancellation is planned: one order, a few, or a batch's (see `MOST_ORDERS_BY_ID`). */
const planned = (orders: number) => (orders === 1 ? "one" : orders > MOST_ORDERS_BY_ID ? "many" : "some");

const writeOrdersStatement = statement(
  ({ writes, orders }: OrdersToWrite) => `${writes ? fieldsOf(writes).join() : "linked"}|${carriedColumns(orders).join()}|${planned(orders.length)}`,
  (db, value, { writes, orders }) => {
    const columns = ["external_id", ...carriedColumns(orders)] as (keyof OrderValues)[];
    const store = { id: value((args) => args.storeId) };
    const options = { backfill: value((args) => args.backfill) };
    const withCustomer = writes !== undefined;
    const customerId = withCustomer ? (["customer_id"] as const) : [];
    // The customers' CTEs are read by name in SQL only (the link by key, the triggers): kysely needs not know them.
    const base: QueryCreator<Database> = withCustomer ? (withCustomers(db, value as ValueOf<OrdersToWrite & CustomersToWrite>, fieldsOf(writes)) as unknown as QueryCreator<Database>) : db;
    const written = base.with("ord", (qc) =>
      overTables(qc)
        .insertInto("orders")
        .columns(["store_id", ...columns, ...customerId])
        .expression(
          unnestRows(
            [sql`${store.id}::bigint`],
            arrayColumns(value, orderTypes, columns, (args) => args.orders),
            withCustomer ? linkedByKey(value((args) => args.customerKeys), "customer") : {},
          ),
        )
        .onConflict((oc) => oc.columns(["store_id", "external_id"]).doUpdateSet(mergedColumns("orders", [...carriedColumns(orders), ...customerId])).where(notStale("orders")))
        .returning(WRITTEN_ORDER)
        .returning(wasInserted.as("inserted")),
    );
    const tables = withCustomer ? (["customer", "ord"] as const) : (["ord"] as const);
    return withTriggers(written, { tables, orders: orders.length, alone: withCustomer && orders.length === 1 }, store, options)
      .selectFrom(sql<{ one: number }>`(select 1)`.as("one"))
      .leftJoin("ord", (join) => join.onTrue())
      .select(WRITTEN_ORDER.map((column) => `ord.${column}` as const))
      .select("ord.inserted")
      .select(freshOrFail(allWritten(value((args) => args.strict), value((args) => args.orders.length), "ord")).as("fresh"));
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
  ({ changes }: { storeId: number; externalId: string; changes: OrderChanges }) => Object.keys(changes).join(),
  (db, value, { changes }) => {
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
