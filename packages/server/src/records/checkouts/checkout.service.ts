import { type Checkout, type CheckoutInput, type CheckoutPatch, type CheckoutRecord, checkoutInputSchema, checkoutSchema } from "@commerce-ingest/shared";
import type { StoreContext } from "../../tenancy/access.js";
import type { TriggerOptions } from "../../automations/triggers.js";
import { inStatement, formatMoney, formatTimestamp } from "../../db/sql.js";
import type { Db } from "../../db/types.js";
import { AppError } from "../../errors.js";
import { unstorableText } from "../../text.js";
import { embeddingFields, writeEmbedding } from "../orders/order.service.js";
import { presentOnly, sharedOptionalColumns, upsertSpec } from "../write-path.js";
import { embeddingRecord, readBack } from "../read-back.js";
import * as repo from "./checkout.repository.js";
import { customerTouches } from "../customers/customer.service.js";

/** Checkouts read back with their customers' keys (404 `Checkout not found` for an unknown one). */
export const checkoutReadBack = readBack({ table: "checkouts", alias: "c", notFound: "CHECKOUT_NOT_FOUND", rows: repo.checkoutRecords, toRecord: toCheckoutRecord });

function toCheckoutRecord(row: repo.CheckoutRecordRow): CheckoutRecord {
  return { ...toCheckout(row), abandoned_at: formatTimestamp(row.abandoned_at), ...embeddingRecord(row) };
}

export function toCheckout(row: repo.WrittenCheckout): Checkout {
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
  return presentOnly({ recovery_url: input.recovery_url }, embeddingFields(input, { abandoned_at: input.abandoned_at }));
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

/** How checkouts are written: a push, a batch and an import's lines alike. */
export const checkoutWrite = upsertSpec({
  resource: "checkouts",
  body: checkoutInputSchema,
  phonePaths: [["customer", "phone"]],
  example: {
    external_id: "chk-5521",
    abandoned_at: "2026-11-20T13:40:00Z",
    total_price: 89.9,
    currency: "USD",
    recovery_url: "https://shop.example/checkouts/chk-5521/recover",
    customer: { external_id: "c-1001", phone: "+14155552671", first_name: "Ada" },
    line_items: [{ sku: "MUG-1", title: "Mug", quantity: 1, price: 89.9 }],
  },
  output: checkoutSchema,
  touches: (checkout) => [`checkouts:${checkout.external_id}`, ...customerTouches(checkout.customer)],
  write: (call, bodies) => upsertCheckouts(call.db, call.store, bodies, call.options),
});
