import { sql } from "kysely";
import type { Executor } from "../db/types.js";
import type { DeliveryAnswer } from "./providers.js";

/** A store's endpoint as the worker signs with it: the current secret, and the rolled one while its overlap lasts. */
export type StoreEndpoint = { url: string; secrets: string[] };

export function findEndpoint(db: Executor, storeId: number) {
  return db
    .selectFrom("webhook_endpoints")
    .select(["store_id", "url", "secret", "previous_secret", "previous_until", "created_at", "updated_at"])
    .where("store_id", "=", storeId)
    .executeTakeFirst();
}

/** The endpoint deliveries of a store go to now, with the secrets valid now; undefined when it has none. */
export async function endpointForDelivery(db: Executor, storeId: number): Promise<StoreEndpoint | undefined> {
  const row = await db
    .selectFrom("webhook_endpoints")
    .select(["url", "secret", sql<string | null>`case when previous_until > now() then previous_secret end`.as("previous")])
    .where("store_id", "=", storeId)
    .executeTakeFirst();
  return row && { url: row.url, secrets: row.previous ? [row.secret, row.previous] : [row.secret] };
}

/** Which of these stores deliver to an endpoint of their own. */
export async function storesWithEndpoints(db: Executor, storeIds: readonly number[]): Promise<Set<number>> {
  if (storeIds.length === 0) return new Set();
  const rows = await db.selectFrom("webhook_endpoints").select("store_id").where("store_id", "in", [...new Set(storeIds)]).execute();
  return new Set(rows.map((row) => Number(row.store_id)));
}

/** Sets the store's endpoint's URL, with `secret` when it has none yet (a new endpoint); true when it was new. */
export async function putEndpoint(db: Executor, storeId: number, url: string, secret: string): Promise<boolean> {
  const row = await db
    .insertInto("webhook_endpoints")
    .values({ store_id: storeId, url, secret })
    .onConflict((oc) => oc.column("store_id").doUpdateSet({ url, updated_at: sql<Date>`now()` }))
    .returning(sql<boolean>`(xmax = 0)`.as("created"))
    .executeTakeFirstOrThrow();
  return row.created;
}

/** A new secret; the one it replaces stays valid for `overlapSeconds`. False when the store has no endpoint. */
export async function rollSecret(db: Executor, storeId: number, secret: string, overlapSeconds: number): Promise<boolean> {
  const result = await db
    .updateTable("webhook_endpoints")
    .set((eb) => ({
      previous_secret: eb.ref("secret"),
      previous_until: sql<Date>`now() + make_interval(secs => ${overlapSeconds})`,
      secret,
      updated_at: sql<Date>`now()`,
    }))
    .where("store_id", "=", storeId)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function deleteEndpoint(db: Executor, storeId: number): Promise<boolean> {
  const result = await db.deleteFrom("webhook_endpoints").where("store_id", "=", storeId).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

export async function recordAttempt(db: Executor, storeId: number, messageId: string | null, answer: DeliveryAnswer): Promise<void> {
  await db
    .insertInto("delivery_attempts")
    .values({ store_id: storeId, message_id: messageId, url: answer.url, duration_ms: answer.durationMs, status: answer.status, answer: answer.answer, error: answer.error })
    .execute();
}

const ATTEMPT = ["a.id", "a.message_id", "a.url", "a.attempted_at", "a.duration_ms", "a.status", "a.answer", "a.error"] as const;

/** A store's latest deliveries (test events included), newest first. */
export function recentAttempts(db: Executor, storeId: number, limit: number) {
  return db.selectFrom("delivery_attempts as a").select(ATTEMPT).where("a.store_id", "=", storeId).orderBy("a.attempted_at", "desc").orderBy("a.id", "desc").limit(limit).execute();
}

/** The attempts of these messages, oldest first. */
export function attemptsOf(db: Executor, messageIds: readonly string[]) {
  if (messageIds.length === 0) return Promise.resolve([]);
  return db.selectFrom("delivery_attempts as a").select(ATTEMPT).where("a.message_id", "in", [...messageIds]).orderBy("a.attempted_at").orderBy("a.id").execute();
}
