import type { Checkout, CheckoutInput, CheckoutPatch, CheckoutRecord } from "@commerce-ingest/shared";
import type { StoreContext } from "../../tenancy/store-context.js";
import type { TriggerOptions } from "../../automations/triggers.js";
import { olderThanStored } from "../../db/sql.js";
import { inStatement, inTransaction } from "../../db/transaction.js";
import type { CheckoutRow, Db } from "../../db/types.js";
import { AppError } from "../../errors.js";
import { formatMoney, toMoney } from "../../money.js";
import { unstorableText } from "../../text.js";
import { formatOptionalTimestamp, formatTimestamp } from "../../time.js";
import { customerWrite, embeddedInOneGroup, upsertEmbeddedCustomers } from "../customers/customer.service.js";
import { byShape, inOneGroup, inOneStatement, orStored, presentOnly, sharedOptionalColumns } from "../fields.js";
import { readBack } from "../read-back.js";
import * as repo from "./checkout.repository.js";

/** Checkouts read back with their customers' keys (404 `Checkout not found` for an unknown one). */
export const checkoutReadBack = readBack({ table: "checkouts", alias: "c", notFound: "CHECKOUT_NOT_FOUND", rows: repo.checkoutRecords, toRecord: toCheckoutRecord });

function toCheckoutRecord(row: repo.CheckoutRecordRow): CheckoutRecord {
  return {
    ...toCheckout(row),
    abandoned_at: formatTimestamp(row.abandoned_at),
    customer_external_id: row.customer_external_id,
    line_items: (row.line_items ?? null) as CheckoutRecord["line_items"],
    metadata: (row.metadata ?? null) as CheckoutRecord["metadata"],
    source_updated_at: formatOptionalTimestamp(row.source_updated_at),
    updated_at: formatTimestamp(row.updated_at),
  };
}

export function toCheckout(row: CheckoutRow): Checkout {
  return {
    external_id: row.external_id,
    store_id: row.store_id,
    status: row.status,
    total_price: formatMoney(row.total_price),
    currency: row.currency,
    recovery_url: row.recovery_url,
    tags: row.tags,
    created_at: formatTimestamp(row.created_at),
  };
}

/** What an upsert writes of a checkout (its tags as a list); absent fields are left out, so they keep their stored value. */
function checkoutFields(input: CheckoutInput): Omit<repo.CheckoutValues, "customer_id"> {
  return {
    external_id: input.external_id,
    abandoned_at: input.abandoned_at,
    total_price: toMoney(input.total_price),
    ...presentOnly({ recovery_url: input.recovery_url, source_updated_at: input.source_updated_at }),
    ...sharedOptionalColumns({ currency: input.currency, tags: input.tags, metadata: input.metadata, line_items: input.line_items }),
  };
}

/**
 * The checkout and its embedded customer (upserted by the key rule and
 * linked), the recovery it schedules or cancels and the contact sync it calls
 * for, in one statement: one round trip, no transaction to open or commit.
 */
export async function upsertCheckout(
  db: Db,
  store: StoreContext,
  input: CheckoutInput,
  options: TriggerOptions,
): Promise<{ checkout: Checkout; created: boolean; stale: boolean }> {
  return orStored(
    async () => {
      // An embedded customer follows its checkout: the checkout's source time decides.
      const customer = customerWrite({ ...input.customer, source_updated_at: undefined });
      const { fresh: _fresh, inserted, ...row } = await inOneStatement(db, (db) =>
        repo.upsertCheckoutAlone(db, {
          storeId: store.id,
          writes: [customer],
          checkout: checkoutFields(input),
          backfill: options.backfill,
          recoveryDelaySeconds: store.recoveryDelaySeconds,
        }),
      );
      if (row.id === null) throw new Error("a checkout was not written");
      return { checkout: toCheckout(row as CheckoutRow), created: inserted === true };
    },
    async () => {
      const row = await repo.findCheckout(db, store.id, input.external_id);
      return row && { checkout: toCheckout(row), created: false };
    },
  );
}

/**
 * Many checkouts with distinct external_ids (a batch, or pushes written
 * together): in one statement when they carry no source time and one set of
 * fields (`upsertCheckoutsWithCustomers`), else in a constant number of
 * statements in a transaction: the customers, the checkouts (one statement
 * per set of fields sent), the recoveries cancelled and the jobs. Each is
 * stored and triggers as it would pushed alone.
 */
export async function upsertCheckouts(
  db: Db,
  store: StoreContext,
  inputs: readonly CheckoutInput[],
  options: TriggerOptions,
): Promise<Array<{ checkout: Checkout; created: boolean; stale: boolean }>> {
  const checkouts = inOneGroup(byShape(inputs.map(checkoutFields), (write) => write, (write) => write.external_id), inputs);
  const customers = checkouts && embeddedInOneGroup(inputs, checkouts);
  // Checkouts with no source time, and their customers, of one set of fields each: nothing to check before writing
  // them, so one statement writes them all, atomic by itself (no transaction to open and commit).
  if (customers && checkouts) {
    const rows = await inStatement(db, (db) =>
      repo.upsertCheckoutsWithCustomers(db, {
        storeId: store.id,
        writes: customers.writes,
        checkouts,
        customerKeys: customers.keys,
        backfill: options.backfill,
        recoveryDelaySeconds: store.recoveryDelaySeconds,
      }),
    );
    const written = new Map(rows.map((row) => [row.external_id, row]));
    return inputs.map((input) => {
      const row = written.get(input.external_id);
      if (!row) throw new Error("a checkout was not written");
      return { checkout: toCheckout(row), created: row.inserted, stale: false };
    });
  }
  return inTransaction(db, async (trx) => {
    // A record older than the stored one is not applied: nothing of it is written, its customer included.
    const older = await olderThanStored(trx, "checkouts", store.id, inputs);
    const applied = inputs.filter((input) => !older.has(input.external_id));
    const customers = await upsertEmbeddedCustomers(trx, store, applied.map((input) => input.customer), options);
    const written = new Map<string, CheckoutRow & { inserted: boolean }>();
    const writes = applied.map((input) => ({ ...checkoutFields(input), customer_id: customers.rowOf(input.customer).id }));
    for (const group of byShape(writes, (write) => write, (write) => write.external_id)) {
      const push = { storeId: store.id, checkouts: group, backfill: options.backfill, recoveryDelaySeconds: store.recoveryDelaySeconds };
      for (const row of await repo.upsertCheckouts(trx, push)) written.set(row.external_id, row);
    }
    const stale = new Map((await repo.findCheckouts(trx, store.id, inputs.map((input) => input.external_id).filter((id) => !written.has(id)))).map((row) => [row.external_id, row]));
    return inputs.map((input) => {
      const row = written.get(input.external_id);
      if (row) return { checkout: toCheckout(row), created: row.inserted, stale: false };
      const stored = stale.get(input.external_id);
      if (!stored) throw new Error("a checkout was neither written nor found");
      return { checkout: toCheckout(stored), created: false, stale: true };
    });
  });
}

/**
 * A PATCH in one statement, atomic by itself (see `updateCheckoutAlone`): the
 * checkout and the recovery it cancels or schedules.
 */
export async function updateCheckout(
  db: Db,
  store: StoreContext,
  externalId: string,
  patch: CheckoutPatch,
  options: TriggerOptions,
): Promise<{ checkout: Checkout; stale: boolean }> {
  const changes: repo.CheckoutChanges = {
    ...presentOnly({ status: patch.status, recovery_url: patch.recovery_url, source_updated_at: patch.source_updated_at }),
    ...sharedOptionalColumns({ tags: patch.tags, metadata: patch.metadata }),
  };
  // No stored checkout can have an id PostgreSQL cannot store.
  if (unstorableText(externalId)) throw new AppError("CHECKOUT_NOT_FOUND");
  const row =
    Object.keys(changes).length === 0
      ? await repo.findCheckout(db, store.id, externalId)
      : await inStatement(db, (db) =>
          repo.updateCheckoutAlone(db, { storeId: store.id, externalId, changes, backfill: options.backfill, recoveryDelaySeconds: store.recoveryDelaySeconds }),
        );
  if (row) return { checkout: toCheckout(row), stale: false };
  // Not changed: either there is no such checkout, or the patch is older than it.
  const stored = patch.source_updated_at === undefined ? undefined : await repo.findCheckout(db, store.id, externalId);
  if (!stored) throw new AppError("CHECKOUT_NOT_FOUND");
  return { checkout: toCheckout(stored), stale: true };
}
