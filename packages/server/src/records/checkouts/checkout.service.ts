import type { Checkout, CheckoutInput, CheckoutPatch, CheckoutRecord } from "@commerce-ingest/shared";
import type { StoreContext } from "../../tenancy/store-context.js";
import type { TriggerOptions } from "../../automations/triggers.js";
import { inStatement } from "../../db/transaction.js";
import type { CheckoutRow, Db } from "../../db/types.js";
import { AppError } from "../../errors.js";
import { formatMoney } from "../../money.js";
import { unstorableText } from "../../text.js";
import { formatTimestamp } from "../../time.js";
import { embeddingFields, writeEmbedding } from "../embedding.js";
import { presentOnly, sharedOptionalColumns } from "../fields.js";
import { embeddingRecord, readBack } from "../read-back.js";
import * as repo from "./checkout.repository.js";

/** Checkouts read back with their customers' keys (404 `Checkout not found` for an unknown one). */
export const checkoutReadBack = readBack({ table: "checkouts", alias: "c", notFound: "CHECKOUT_NOT_FOUND", rows: repo.checkoutRecords, toRecord: toCheckoutRecord });

function toCheckoutRecord(row: repo.CheckoutRecordRow): CheckoutRecord {
  return { ...toCheckout(row), abandoned_at: formatTimestamp(row.abandoned_at), ...embeddingRecord(row) };
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

/** What an upsert writes of a checkout (see `embeddingFields`); absent fields are left out, so they keep their stored value. */
function checkoutFields(input: CheckoutInput): repo.CheckoutValues {
  return { ...embeddingFields(input), abandoned_at: input.abandoned_at, ...presentOnly({ recovery_url: input.recovery_url }) };
}

/**
 * Checkouts with distinct external_ids, each with its embedded customer, the
 * recoveries they schedule or cancel and the contact syncs they call for, by
 * the one write path (see `writeEmbedding`).
 */
export const upsertCheckouts = writeEmbedding({ table: "checkouts", fields: checkoutFields, write: repo.writeCheckouts, stored: repo.findCheckouts, toRecord: toCheckout });

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
