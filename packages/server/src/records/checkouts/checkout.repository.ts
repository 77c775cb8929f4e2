import type { CheckoutStatus } from "@commerce-ingest/shared";
import { sql, type Selectable } from "kysely";
import { withTriggers, WRITTEN } from "../../automations/triggers.js";
import { answerColumns, arrayColumns, carriedColumns, mergedColumns, notStaleFor, now, overTables, rowValues, unnestRows, upsertRecords, wasInserted, written, writtenRows, statement, type ValueOf } from "../../db/sql.js";
import { EMBEDDING_TYPES, embedding, type EmbeddingToWrite, type EmbeddingValues } from "../customers/customer.repository.js";
import type { CheckoutTable, Executor } from "../../db/types.js";

/**
 * The columns a write answers with: the response's, and the id. Not the line
 * items, metadata, customer and times, which the statement's own triggers
 * read and nothing after it does.
 */
export const WRITTEN_CHECKOUT = ["id", "store_id", "external_id", "status", "total_price", "currency", "recovery_url", "tags", "created_at"] as const;
export type WrittenCheckout = Pick<Selectable<CheckoutTable>, (typeof WRITTEN_CHECKOUT)[number]>;
/** What a statement wrote of a checkout, and whether it created it. */
export type WrittenCheckoutRow = WrittenCheckout & { inserted: boolean };

/** A checkout's write as plain values (see `EmbeddingValues`), for `writeCheckouts`. */
export type CheckoutValues = EmbeddingValues & { abandoned_at: string; recovery_url?: string | null };

/** The SQL type of each column a checkout's write can carry. */
const checkoutTypes: Record<keyof CheckoutValues, string> = { ...EMBEDDING_TYPES, abandoned_at: "timestamptz", recovery_url: "text" };

/** The checkouts one statement writes (see `EmbeddingToWrite`), and their store's recovery delay. */
export type CheckoutsToWrite = EmbeddingToWrite<CheckoutValues> & { recoveryDelaySeconds: number };

/**
 * Writes checkouts in one statement, atomic by itself, whichever entry they
 * came from (a push is a set of one), as `writeOrders` writes orders: their
 * customers when they carry them (see `embedding`), the checkouts (CTE `chk`;
 * see `checkoutMerge` for the status), the recoveries they cancel when they
 * are not abandoned and the jobs they call for (contact syncs and
 * recoveries), chosen in SQL. Built once per set of fields (see `statement`).
 */
export async function writeCheckouts(db: Executor, push: CheckoutsToWrite): Promise<WrittenCheckoutRow[]> {
  return push.records.length === 0 ? [] : written(await writeCheckoutsStatement(db, push));
}

const writeCheckoutsStatement = statement(
  (db, value: ValueOf<CheckoutsToWrite>, { writes, records, statusesOnly }) => {
    const columns = ["external_id", ...carriedColumns(records)] as (keyof CheckoutValues)[];
    const store = { id: value((args) => args.storeId), recoveryDelaySeconds: value((args) => args.recoveryDelaySeconds) };
    const { base, linked, link, tables } = embedding(db, value, writes);
    // A new checkout starts abandoned (see `checkoutMerge`).
    const abandoned = [sql`${store.id}::bigint`, sql`'abandoned'`];
    const rows = unnestRows(abandoned, arrayColumns(value, checkoutTypes, columns, (args) => args.records, records.length === 1), link);
    const chk = base.with(WRITTEN.checkouts, (qc) =>
      upsertRecords(qc, "checkouts", ["store_id", "status", ...columns, ...linked], rows, checkoutMerge([...carriedColumns(records), ...linked]))
        .returningAll()
        .returning(wasInserted.as("inserted")),
    );
    return withTriggers(chk, { tables: [...tables, WRITTEN.checkouts] }, store, { backfill: value((args) => args.backfill) })
      .selectFrom(writtenRows<WrittenCheckoutRow, CheckoutsToWrite>(value, WRITTEN.checkouts, (args) => args.records.length))
      .select(answerColumns(WRITTEN_CHECKOUT, statusesOnly));
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
  (db, value: ValueOf<CheckoutPatchAlone>, { changes }) => {
    const store = { id: value((args) => args.storeId), recoveryDelaySeconds: value((args) => args.recoveryDelaySeconds) };
    const options = { backfill: value((args) => args.backfill) };
    const columns = Object.keys(changes) as (keyof CheckoutChanges)[];
    const set = rowValues(value, { ...checkoutTypes, status: "text" }, columns, (args) => args.changes);
    // Entering `abandoned` from another state is a new abandonment (the right-hand `status` is the stored one).
    const entering = columns.includes("status") ? sql<boolean>`(${value((args) => args.changes.status)}::text = 'abandoned' and status <> 'abandoned')` : sql<boolean>`false`;
    const written = db.with(WRITTEN.checkouts, (qc) =>
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
    return withTriggers(written, { tables: [WRITTEN.checkouts] }, store, options)
      .selectFrom(WRITTEN.checkouts)
      .selectAll();
  },
);

/** A store's checkouts with their customers' keys, as they are read back (see `readBack`). */
export const checkoutRecords = (db: Executor, storeId: number) =>
  db.selectFrom("checkouts as c").leftJoin("customers as cu", "cu.id", "c.customer_id").selectAll("c").select("cu.external_id as customer_external_id").where("c.store_id", "=", storeId);
export type CheckoutRecordRow = Awaited<ReturnType<ReturnType<typeof checkoutRecords>["executeTakeFirstOrThrow"]>>;
