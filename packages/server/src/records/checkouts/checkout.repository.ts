import type { CheckoutStatus } from "@commerce-ingest/shared";
import { sql, type Insertable } from "kysely";
import { withTriggers } from "../../automations/triggers.js";
import { arrayColumns, carriedColumns, freshOrFail, linkedByKey, mergedColumns, notStale, notStaleFor, now, overTables, rowValues, unnestRows, wasInserted } from "../../db/sql.js";
import { onlyRow, statement } from "../../db/statement.js";
import { fieldsOf, withCustomers, type CustomersToWrite } from "../customers/customer.repository.js";
import type { CheckoutTable, Executor } from "../../db/types.js";
import type { SharedOptionalColumns } from "../fields.js";

export type CheckoutWrite = {
  external_id: string;
  customer_id: number;
  abandoned_at: string;
  total_price: string;
  recovery_url?: string | null;
  source_updated_at?: string;
} & SharedOptionalColumns;

/** A checkout's write as plain values (its tags as a list), for `upsertCheckouts`. */
export type CheckoutValues = Omit<CheckoutWrite, "tags"> & { tags?: readonly string[] };

/** The SQL type of each column a checkout's write can carry. */
const checkoutTypes: Record<keyof CheckoutValues, string> = {
  external_id: "text",
  customer_id: "bigint",
  abandoned_at: "timestamptz",
  total_price: "numeric",
  currency: "text",
  recovery_url: "text",
  source_updated_at: "timestamptz",
  tags: "text[]",
  metadata: "jsonb",
  line_items: "jsonb",
};

/** The checkouts one statement writes (their customers written by an earlier one), and their store's triggers. */
export type CheckoutsToWrite = { storeId: number; checkouts: readonly CheckoutValues[]; backfill: boolean; recoveryDelaySeconds: number };

/**
 * Inserts or updates these checkouts in one statement, their rows passed as
 * one array per column (`unnest`): the same statement text for any number of
 * checkouts. Every write carries the same fields (absent ones keep their
 * stored value) and its own key; keys are distinct. Nothing comes back for a
 * write older than the stored checkout. See `checkoutUpsert` for the status.
 * The same statement records what the checkouts written trigger (see `withTriggers`).
 */
export function upsertCheckouts(db: Executor, push: CheckoutsToWrite) {
  if (push.checkouts.length === 0) return Promise.resolve([]);
  return upsertCheckoutsStatement(db, push);
}

/** `upsertCheckouts`' statement, built once per set of fields (see `statement`). */
const upsertCheckoutsStatement = statement(
  ({ checkouts }: CheckoutsToWrite) => carriedColumns(checkouts).join(),
  (db, value, { checkouts }) => {
    const columns = ["external_id", ...carriedColumns(checkouts)] as (keyof CheckoutValues)[];
    const store = { id: value((args) => args.storeId), recoveryDelaySeconds: value((args) => args.recoveryDelaySeconds) };
    const written = db.with("chk", (qc) =>
      overTables(qc)
        .insertInto("checkouts")
        .columns(["store_id", "status", ...columns])
        .expression(
          unnestRows(
            [sql`${store.id}::bigint`, sql`'abandoned'`],
            arrayColumns(value, checkoutTypes, columns, (args) => args.checkouts),
          ),
        )
        .onConflict((oc) => oc.columns(["store_id", "external_id"]).doUpdateSet(checkoutMerge(carriedColumns(checkouts))).where(notStale("checkouts")))
        .returningAll()
        .returning(wasInserted.as("inserted")),
    );
    return withTriggers(written, { tables: ["chk"] }, store, { backfill: value((args) => args.backfill) })
      .selectFrom("chk")
      .selectAll();
  },
);

/**
 * What a checkout's upsert sets on a stored one: the fields it carries, and
 * its status. A new checkout starts `abandoned`. A re-push moves `active`
 * back to `abandoned` and keeps any other state: a late or repeated push never
 * reopens a recovered, completed or expired checkout.
 */
function checkoutMerge(columns: readonly string[]) {
  return {
    ...mergedColumns("checkouts", columns),
    status: sql<CheckoutStatus>`case when checkouts.status = 'active' then 'abandoned' else checkouts.status end`,
    abandonment_count: sql<number>`checkouts.abandonment_count + case when checkouts.status = 'active' then 1 else 0 end`,
    entered_abandoned: sql<boolean>`checkouts.status = 'active'`,
  };
}

/** Checkouts written with their customers in one statement (see `upsertCheckoutsWithCustomers`): each checkout's customer by key. */
export type CheckoutsWithCustomers = CustomersToWrite & {
  checkouts: ReadonlyArray<Omit<CheckoutValues, "customer_id">>;
  customerKeys: readonly string[];
  backfill: boolean;
  recoveryDelaySeconds: number;
};

/**
 * Checkouts and their customers in one statement, atomic by itself: the
 * customers and contacts (as `upsertCustomers` writes them, CTE `customer`),
 * the checkouts (as `upsertCheckouts`, each linked to its customer by key,
 * CTE `chk`), the recoveries they cancel when they are not abandoned and the
 * jobs they call for (contact syncs and recoveries), chosen in SQL. For writes
 * that carry no source time (nothing to check before them) of one set of
 * fields each; built once per those sets (see `statement`).
 */
export function upsertCheckoutsWithCustomers(db: Executor, push: CheckoutsWithCustomers) {
  return upsertCheckoutsWithCustomersStatement(db, push);
}

const upsertCheckoutsWithCustomersStatement = statement(
  ({ writes, checkouts }: CheckoutsWithCustomers) => `${fieldsOf(writes).join()}|${carriedColumns(checkouts).join()}`,
  (db, value, { writes, checkouts }) => {
    const columns = ["external_id", ...carriedColumns(checkouts)] as (keyof CheckoutsWithCustomers["checkouts"][number])[];
    const store = { id: value((args) => args.storeId), recoveryDelaySeconds: value((args) => args.recoveryDelaySeconds) };
    const options = { backfill: value((args) => args.backfill) };
    const written = withCustomers(db, value, fieldsOf(writes)).with("chk", (qc) =>
        overTables(qc)
          .insertInto("checkouts")
          .columns(["store_id", "status", ...columns, "customer_id"])
          .expression(
            unnestRows(
              [sql`${store.id}::bigint`, sql`'abandoned'`],
              arrayColumns(value, checkoutTypes, columns, (args) => args.checkouts),
              linkedByKey(value((args) => args.customerKeys), "customer"),
            ),
          )
          .onConflict((oc) => oc.columns(["store_id", "external_id"]).doUpdateSet(checkoutMerge([...carriedColumns(checkouts), "customer_id"])).where(notStale("checkouts")))
          .returningAll()
          .returning(wasInserted.as("inserted")),
      );
    return withTriggers(written, { tables: ["customer", "chk"] }, store, options)
      .selectFrom("chk")
      .selectAll();
  },
);

/** What one checkout's push writes (see `upsertCheckoutAlone`): its customer, the checkout (its tags as a list), and its store's triggers. */
export type CheckoutAlone = CustomersToWrite & { checkout: Omit<CheckoutValues, "customer_id">; backfill: boolean; recoveryDelaySeconds: number };

/**
 * One checkout's push in one statement: its customer and contact (as
 * `upsertCustomers` writes them, CTE `customer`), the checkout (as
 * `upsertCheckouts`, CTE `chk`), the pending recovery it cancels when it left
 * `abandoned`, and the jobs it calls for (contact sync and recovery, chosen in
 * SQL). A write older than the stored checkout fails the statement with a
 * stale write, and nothing of it stays. Built once per set of the customer's
 * and the checkout's fields (see `statement`).
 */
export function upsertCheckoutAlone(db: Executor, push: CheckoutAlone) {
  return onlyRow(upsertCheckoutAloneStatement(db, push), "a checkout's statement");
}

const upsertCheckoutAloneStatement = statement(
  ({ writes, checkout }: CheckoutAlone) => `${fieldsOf(writes).join()}|${Object.keys(checkout).join()}`,
  (db, value, { writes, checkout }) => {
    const store = { id: value((args) => args.storeId), recoveryDelaySeconds: value((args) => args.recoveryDelaySeconds) };
    const options = { backfill: value((args) => args.backfill) };
    const columns = Object.keys(checkout) as (keyof CheckoutAlone["checkout"])[];
    const row = rowValues(value, checkoutTypes, columns, (args) => args.checkout);
    const written = withCustomers(db, value, fieldsOf(writes)).with("chk", (qc) =>
        overTables(qc)
          .insertInto("checkouts")
          .values({ store_id: store.id, status: sql.lit("abandoned"), ...row, customer_id: sql<number>`(select id from customer)` } as Insertable<CheckoutTable>)
          .onConflict((oc) => oc.columns(["store_id", "external_id"]).doUpdateSet(checkoutMerge([...columns.filter((column) => column !== "external_id"), "customer_id"])).where(notStale("checkouts")))
          .returningAll()
          .returning(wasInserted.as("inserted")),
      );
    return withTriggers(written, { tables: ["customer", "chk"] }, store, options)
      .selectFrom(sql<{ one: number }>`(select 1)`.as("one"))
      .leftJoin("chk", (join) => join.onTrue())
      .selectAll("chk")
      .select(freshOrFail(sql<boolean>`chk.id is not null`).as("fresh"));
  },
);

export function findCheckouts(db: Executor, storeId: number, externalIds: readonly string[]) {
  if (externalIds.length === 0) return Promise.resolve([]);
  return db.selectFrom("checkouts").selectAll().where("store_id", "=", storeId).where("external_id", "in", externalIds).execute();
}

export function findCheckout(db: Executor, storeId: number, externalId: string) {
  return db.selectFrom("checkouts").selectAll().where("store_id", "=", storeId).where("external_id", "=", externalId).executeTakeFirst();
}

/** What a PATCH can change of a checkout (its tags as a list). */
export type CheckoutChanges = Partial<Pick<CheckoutValues, "recovery_url" | "source_updated_at" | "tags" | "metadata">> & { status?: CheckoutStatus };

/** A checkout's PATCH (see `updateCheckoutAlone`): which checkout, its changes, and its store's triggers. */
export type CheckoutPatchAlone = { storeId: number; externalId: string; changes: CheckoutChanges; backfill: boolean; recoveryDelaySeconds: number };

/**
 * Applies a PATCH to the checkout in one statement: the checkout (CTE `chk`),
 * the pending recovery it cancels when it left `abandoned`, and the recovery
 * it schedules when it entered `abandoned` (a new abandonment), as a push's
 * statement does (see `withTriggers`). Nothing comes back, and nothing is
 * written, when there is no such checkout or the patch is older than it.
 * Built once per set of fields changed (see `statement`).
 */
export async function updateCheckoutAlone(db: Executor, patch: CheckoutPatchAlone) {
  const [row] = await updateCheckoutStatement(db, patch);
  return row;
}

const updateCheckoutStatement = statement(
  ({ changes }: CheckoutPatchAlone) => Object.keys(changes).join(),
  (db, value, { changes }) => {
    const store = { id: value((args) => args.storeId), recoveryDelaySeconds: value((args) => args.recoveryDelaySeconds) };
    const options = { backfill: value((args) => args.backfill) };
    const columns = Object.keys(changes) as (keyof CheckoutChanges)[];
    const set = rowValues(value, { ...checkoutTypes, status: "text" }, columns, (args) => args.changes);
    // Entering `abandoned` from another state is a new abandonment (the right-hand `status` is the stored one).
    const entering = columns.includes("status") ? sql<boolean>`(${value((args) => args.changes.status)}::text = 'abandoned' and status <> 'abandoned')` : sql<boolean>`false`;
    const written = db.with("chk", (qc) =>
        overTables(qc)
          .updateTable("checkouts")
          .set({
            ...set,
            abandonment_count: sql<number>`abandonment_count + case when ${entering} then 1 else 0 end`,
            entered_abandoned: entering,
            updated_at: now(),
          })
          .where("store_id", "=", store.id)
          .where("external_id", "=", value((args) => args.externalId))
          .where(notStaleFor(columns.includes("source_updated_at") ? value((args) => args.changes.source_updated_at) : undefined))
          .returningAll(),
      );
    return withTriggers(written, { tables: ["chk"] }, store, options)
      .selectFrom("chk")
      .selectAll();
  },
);

/** A store's checkouts with their customers' keys, as they are read back (see `readBack`). */
export const checkoutRecords = (db: Executor, storeId: number) =>
  db.selectFrom("checkouts as c").leftJoin("customers as cu", "cu.id", "c.customer_id").selectAll("c").select("cu.external_id as customer_external_id").where("c.store_id", "=", storeId);
export type CheckoutRecordRow = Awaited<ReturnType<ReturnType<typeof checkoutRecords>["executeTakeFirstOrThrow"]>>;
