import type { Transaction } from "kysely";
import type { Database, Db } from "./types.js";

const RETRYABLE = new Set(["40001", "40P01"]); // serialization_failure, deadlock_detected
const ATTEMPTS = 3;

function isRetryable(error: unknown): boolean {
  return error instanceof Error && "code" in error && RETRYABLE.has(String(error.code));
}

/**
 * One request, one transaction: everything `work` writes commits together or
 * not at all. A transaction PostgreSQL aborts to break a deadlock is run again
 * rather than surfacing as a 500.
 */
export async function inTransaction<T>(db: Db, work: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await db.transaction().execute(work);
    } catch (error) {
      if (attempt >= ATTEMPTS || !isRetryable(error)) throw error;
      await new Promise((resolve) => setTimeout(resolve, 5 * attempt + Math.random() * 10));
    }
  }
}
