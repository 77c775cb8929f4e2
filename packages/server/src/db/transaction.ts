import type { Transaction } from "kysely";
import type { Database, Db } from "./types.js";

const RETRYABLE = new Set(["40001", "40P01"]); // serialization_failure, deadlock_detected
const ATTEMPTS = 8;

function isRetryable(error: unknown): boolean {
  return error instanceof Error && "code" in error && RETRYABLE.has(String(error.code));
}

/**
 * One request, one transaction: everything `work` writes commits together or
 * not at all. A transaction PostgreSQL aborts to break a deadlock, or for a
 * serialization failure, is run again (up to eight times, with jittered
 * backoff) rather than surfacing as a 500.
 */
export async function inTransaction<T>(db: Db, work: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await db.transaction().execute(work);
    } catch (error) {
      if (attempt >= ATTEMPTS || !isRetryable(error)) throw error;
      // Exponential with full jitter (5 ms doubling, capped at 200 ms): contenders spread apart instead of colliding again.
      await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(200, 5 * 2 ** attempt)));
    }
  }
}
