import { sql, type Insertable, type Selectable } from "kysely";
import { arrayColumns, carriedColumns, freshOrFail, linkedByKey, mergedColumns, notStale, notStaleFor, now, overTables, rowValues, unnestRows, wasInserted } from "../../db/sql.js";
import { MOST_ORDERS_BY_ID } from "../../automations/flows/checkout-recovery.js";
import { withTriggers } from "../../automations/triggers.js";
import { fieldsOf, withCustomers, type CustomersToWrite } from "../customers/customer.repository.js";
import { onlyRow, statement } from "../../db/statement.js";
import type { Executor, OrderTable } from "../../db/types.js";
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

/** An order's write as plain values (its tags as a list), for `upsertOrders`. */
export type OrderValues = Omit<OrderWrite, "tags"> & { tags?: readonly string[] };

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

/** The orders one statement writes, their store, and whether they are a backfill. */
export type OrdersToWrite = { storeId: number; orders: readonly OrderValues[]; backfill: boolean };

/**
 * Inserts or updates these orders in one statement, their rows passed as one
 * array per column (`unnest`): the same statement text for any number of
 * orders, built once per set of columns (see `statement`). Every write carries
 * the same fields (absent ones keep their stored value) and its own key; keys
 * are distinct. Nothing comes back for a write older than the stored order.
 * The same statement cancels the recoveries the orders written cancel and
 * records the post-purchase of those it created, chosen in SQL, as an order's
 * push alone does; their customers are written by an earlier statement.
 */
export function upsertOrders(db: Executor, push: OrdersToWrite) {
  if (push.orders.length === 0) return Promise.resolve([]);
  return upsertOrdersStatement(db, push);
}

const upsertOrdersStatement = statement(
  // How its recovery cancellation is planned depends on how many orders it writes.
  ({ orders }: OrdersToWrite) => `${carriedColumns(orders).join()}|${orders.length > MOST_ORDERS_BY_ID}`,
  (db, value, { orders }) => {
    const columns = ["external_id", ...carriedColumns(orders)] as (keyof OrderValues)[];
    const storeId = value((args) => args.storeId);
    const written = db.with("ord", (qc) =>
        overTables(qc)
          .insertInto("orders")
          .columns(["store_id", ...columns])
          .expression(
            unnestRows(
              [sql`${storeId}::bigint`],
              arrayColumns(value, orderTypes, columns, (args) => args.orders),
            ),
          )
          .onConflict((oc) => oc.columns(["store_id", "external_id"]).doUpdateSet(mergedColumns("orders", carriedColumns(orders))).where(notStale("orders")))
          .returning(WRITTEN_ORDER)
          .returning(wasInserted.as("inserted")),
      );
    return withTriggers(written, { tables: ["ord"], orders: orders.length }, { id: storeId }, { backfill: value((args) => args.backfill) })
      .selectFrom("ord")
      .select([...WRITTEN_ORDER, "inserted"]);
  },
);

/** Orders written with their customers in one statement (see `upsertOrdersWithCustomers`): each order's customer by key. */
export type OrdersWithCustomers = CustomersToWrite & { orders: ReadonlyArray<Omit<OrderValues, "customer_id">>; customerKeys: readonly string[]; backfill: boolean };

/**
 * Orders and their customers in one statement, atomic by itself: the
 * customers and contacts (as `upsertCustomers` writes them, CTE `customer`),
 * the orders (as `upsertOrders`, each linked to its customer by key, CTE
 * `ord`), the recoveries they cancel and the jobs they call for (contact syncs
 * and post-purchase), chosen in SQL. For writes that carry no source time
 * (nothing to check before them) of one set of fields each; built once per
 * those sets (see `statement`).
 */
export function upsertOrdersWithCustomers(db: Executor, push: OrdersWithCustomers) {
  return upsertOrdersWithCustomersStatement(db, push);
}

const upsertOrdersWithCustomersStatement = statement(
  ({ writes, orders }: OrdersWithCustomers) => `${fieldsOf(writes).join()}|${carriedColumns(orders).join()}|${orders.length > MOST_ORDERS_BY_ID}`,
  (db, value, { writes, orders }) => {
    const columns = ["external_id", ...carriedColumns(orders)] as (keyof OrdersWithCustomers["orders"][number])[];
    const store = { id: value((args) => args.storeId) };
    const options = { backfill: value((args) => args.backfill) };
    const written = withCustomers(db, value, fieldsOf(writes)).with("ord", (qc) =>
        overTables(qc)
          .insertInto("orders")
          .columns(["store_id", ...columns, "customer_id"])
          .expression(
            unnestRows(
              [sql`${store.id}::bigint`],
              arrayColumns(value, orderTypes, columns, (args) => args.orders),
              linkedByKey(value((args) => args.customerKeys), "customer"),
            ),
          )
          .onConflict((oc) => oc.columns(["store_id", "external_id"]).doUpdateSet(mergedColumns("orders", [...carriedColumns(orders), "customer_id"])).where(notStale("orders")))
          .returning(WRITTEN_ORDER)
          .returning(wasInserted.as("inserted")),
      );
    return withTriggers(written, { tables: ["customer", "ord"], orders: orders.length }, store, options)
      .selectFrom("ord")
      .select([...WRITTEN_ORDER, "inserted"]);
  },
);

/** What one order's push writes (see `upsertOrderAlone`): its customer, the order (its tags as a list), and whether it is a backfill. */
export type OrderAlone = CustomersToWrite & { order: Omit<OrderValues, "customer_id">; backfill: boolean };

/**
 * One order's push in one statement: its customer and contact (as
 * `upsertCustomers` writes them, CTE `customer`), the order (as
 * `upsertOrders`, CTE `ord`), the recoveries it cancels
 * (`cancelRecoveriesForOrderRows`) and the jobs it calls for (contact sync and
 * post-purchase, chosen in SQL). An order older than the stored one fails the
 * statement with a stale write, and nothing of it stays. Built once per set of
 * the customer's and the order's fields (see `statement`).
 */
export function upsertOrderAlone(db: Executor, push: OrderAlone) {
  return onlyRow(upsertOrderAloneStatement(db, push), "an order's statement");
}

const upsertOrderAloneStatement = statement(
  ({ writes, order }: OrderAlone) => `${fieldsOf(writes).join()}|${Object.keys(order).join()}`,
  (db, value, { writes, order }) => {
    const trigger = { store: { id: value((args) => args.storeId) }, options: { backfill: value((args) => args.backfill) } };
    const columns = Object.keys(order) as (keyof OrderAlone["order"])[];
    const row = rowValues(value, orderTypes, columns, (args) => args.order);
    const written = withCustomers(db, value, fieldsOf(writes)).with("ord", (qc) =>
        overTables(qc)
          .insertInto("orders")
          .values({ store_id: value((args) => args.storeId), ...row, customer_id: sql<number>`(select id from customer)` } as Insertable<OrderTable>)
          .onConflict((oc) => oc.columns(["store_id", "external_id"]).doUpdateSet(mergedColumns("orders", [...columns.filter((column) => column !== "external_id"), "customer_id"])).where(notStale("orders")))
          .returningAll()
          .returning(wasInserted.as("inserted")),
      );
    return withTriggers(written, { tables: ["customer", "ord"], orders: 1, alone: true }, trigger.store, trigger.options)
      .selectFrom(sql<{ one: number }>`(select 1)`.as("one"))
      .leftJoin("ord", (join) => join.onTrue())
      .select(WRITTEN_ORDER.map((column) => `ord.${column}` as const))
      .select("ord.inserted")
      .select(freshOrFail(sql<boolean>`ord.id is not null`).as("fresh"));
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
