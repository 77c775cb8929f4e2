import { sql } from "kysely";
import type { Executor } from "../db/types.js";

export type IdempotentRequest = { store_id: number; key: string; fingerprint: string; request_id: string };

/**
 * Claims the key for this request: true when it is new, expired, or left
 * running by a request that died more than `staleSeconds` ago. One statement,
 * so of two concurrent requests with one key exactly one claims it.
 */
export async function claimKey(db: Executor, request: IdempotentRequest, ttlSeconds: number, staleSeconds: number): Promise<boolean> {
  const claimed = await db
    .insertInto("idempotency_keys")
    .values({ ...request, expires_at: sql<Date>`now() + make_interval(secs => ${ttlSeconds})` })
    .onConflict((oc) =>
      oc
        .columns(["store_id", "key"])
        .doUpdateSet({
          fingerprint: (eb) => eb.ref("excluded.fingerprint"),
          request_id: (eb) => eb.ref("excluded.request_id"),
          status: null,
          body: null,
          created_at: sql<Date>`now()`,
          expires_at: (eb) => eb.ref("excluded.expires_at"),
        })
        .where((eb) =>
          eb.or([
            eb("idempotency_keys.expires_at", "<=", sql<Date>`now()`),
            eb.and([eb("idempotency_keys.status", "is", null), eb("idempotency_keys.created_at", "<", sql<Date>`now() - make_interval(secs => ${staleSeconds})`)]),
          ]),
        ),
    )
    .returning("key")
    .executeTakeFirst();
  return claimed !== undefined;
}

export function findKey(db: Executor, storeId: number, key: string) {
  return db.selectFrom("idempotency_keys").select(["fingerprint", "request_id", "status", "body"]).where("store_id", "=", storeId).where("key", "=", key).executeTakeFirst();
}

export async function completeKey(db: Executor, storeId: number, key: string, status: number, body: string | null): Promise<void> {
  await db.updateTable("idempotency_keys").set({ status, body }).where("store_id", "=", storeId).where("key", "=", key).where("status", "is", null).execute();
}

/** Forgets a claim whose request failed on our side (5xx), so a retry runs again. */
export async function releaseKey(db: Executor, storeId: number, key: string): Promise<void> {
  await db.deleteFrom("idempotency_keys").where("store_id", "=", storeId).where("key", "=", key).where("status", "is", null).execute();
}

export async function deleteExpiredKeys(db: Executor): Promise<void> {
  await db.deleteFrom("idempotency_keys").where("expires_at", "<=", sql<Date>`now()`).execute();
}
