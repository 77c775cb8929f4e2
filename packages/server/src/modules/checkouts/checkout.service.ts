import type { Checkout, CheckoutInput, CheckoutPatch, CheckoutRecord } from "@commerce-ingest/shared";
import type { StoreContext } from "../../auth/store-context.js";
import { checkoutRecoveryJobs, type TriggerOptions } from "../../automations/flows/index.js";
import { enqueueJobs } from "../../automations/jobs.repository.js";
import { inTransaction } from "../../db/transaction.js";
import type { CheckoutRow, Db } from "../../db/types.js";
import { AppError } from "../../errors.js";
import { formatMoney, toMoney } from "../../money.js";
import { unstorableText } from "../../text.js";
import { formatOptionalTimestamp, formatTimestamp } from "../../time.js";
import { upsertCustomerIn } from "../customers/customer.service.js";
import { orStored, presentOnly, sharedOptionalColumns, StaleWrite } from "../fields.js";
import * as repo from "./checkout.repository.js";

/** The stored checkout, read back (404 `Checkout not found` when there is none). */
export async function getCheckout(db: Db, store: StoreContext, externalId: string): Promise<CheckoutRecord> {
  const row = unstorableText(externalId) ? undefined : await repo.findCheckoutRecord(db, store.id, externalId);
  if (!row) throw new AppError("CHECKOUT_NOT_FOUND");
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

export async function upsertCheckout(
  db: Db,
  store: StoreContext,
  input: CheckoutInput,
  options: TriggerOptions,
): Promise<{ checkout: Checkout; created: boolean; stale: boolean }> {
  return orStored(
    () =>
      inTransaction(db, async (trx) => {
        // An embedded customer follows its checkout: the checkout's source time decides.
        const { row: customer, jobs } = await upsertCustomerIn(trx, store, { ...input.customer, source_updated_at: undefined }, options);
        const upserted = await repo.upsertCheckout(trx, store.id, {
          external_id: input.external_id,
          customer_id: customer.id,
          abandoned_at: input.abandoned_at,
          total_price: toMoney(input.total_price),
          ...presentOnly({ recovery_url: input.recovery_url, source_updated_at: input.source_updated_at }),
          ...sharedOptionalColumns(input),
        });
        if (!upserted) throw new StaleWrite();
        const { inserted, ...row } = upserted;
        await enqueueJobs(trx, [...jobs, ...(await checkoutRecoveryJobs(trx, store, row, options))]);
        return { checkout: toCheckout(row), created: inserted };
      }),
    async () => {
      const row = await repo.findCheckout(db, store.id, input.external_id);
      return row && { checkout: toCheckout(row), created: false };
    },
  );
}

export async function updateCheckout(
  db: Db,
  store: StoreContext,
  externalId: string,
  patch: CheckoutPatch,
  options: TriggerOptions,
): Promise<{ checkout: Checkout; stale: boolean }> {
  const changes = {
    ...presentOnly({ status: patch.status, recovery_url: patch.recovery_url, source_updated_at: patch.source_updated_at }),
    ...sharedOptionalColumns({ tags: patch.tags, metadata: patch.metadata }),
  };
  // No stored checkout can have an id PostgreSQL cannot store.
  if (unstorableText(externalId)) throw new AppError("CHECKOUT_NOT_FOUND");
  const row = await inTransaction(db, async (trx) => {
    if (Object.keys(changes).length === 0) return repo.findCheckout(trx, store.id, externalId);
    const updated = await repo.updateCheckout(trx, store.id, externalId, changes);
    if (updated) await enqueueJobs(trx, await checkoutRecoveryJobs(trx, store, updated, options));
    return updated;
  });
  if (row) return { checkout: toCheckout(row), stale: false };
  // Not changed: either there is no such checkout, or the patch is older than it.
  const stored = patch.source_updated_at === undefined ? undefined : await repo.findCheckout(db, store.id, externalId);
  if (!stored) throw new AppError("CHECKOUT_NOT_FOUND");
  return { checkout: toCheckout(stored), stale: true };
}
