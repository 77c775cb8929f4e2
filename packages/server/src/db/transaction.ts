import type { Transaction } from "kysely";
import { isStalePlan, retries } from "./prepared.js";
import { inSavepoint } from "./sql.js";
import type { Database, Db } from "./types.js";

const RETRYABLE = new Set(["40001", "40P01"]); // serialization_failure, deadlock_detected
const ATTEMPTS = 8;

function countRetry(error: unknown): void {
  const code = error instanceof Error && "code" in error ? String(error.code) : "";
  if (code === "40P01") retries.deadlock++;
  else if (code === "40001") retries.serialization++;
  else retries.stale_plan++;
}

export function isRetryable(error: unknown): boolean {
  return (error instanceof Error && "code" in error && RETRYABLE.has(String(error.code))) || isStalePlan(error);
}

/**
 * One request, one transaction: everything `work` writes commits together or
 * not at all. A transaction PostgreSQL aborts to break a deadlock, or for a
 * serialization failure, is run again (up to eight times, with jittered
 * backoff) rather than surfacing as a 500.
 *
 * Called inside a transaction (a batch stores its items in one), `work` runs
 * in a savepoint instead: when it fails, what it wrote is undone and the
 * surrounding transaction goes on; a retryable failure is left to the
 * outermost transaction, which runs again as a whole.
 */
export async function inTransaction<T>(db: Db, work: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
  return db.isTransaction ? nested(db, work) : retried(() => db.transaction().execute(work));
}

/**
 * A write made in one statement, which is atomic by itself: outside a
 * transaction it needs none (no BEGIN and COMMIT round trips); inside one (a
 * batch) it runs in a savepoint, so that its failure undoes only itself. A
 * deadlock or serialization failure runs it again, as `inTransaction` does.
 */
export async function inStatement<T>(db: Db, work: (db: Db) => Promise<T>): Promise<T> {
  return db.isTransaction ? nested(db, work) : retried(() => work(db));
}

function nested<T>(db: Db, work: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
  const trx = db as Transaction<Database>;
  // Nothing is an expected failure here: every one is undone and passed on.
  return inSavepoint(trx, "nested_write", () => work(trx), () => false) as Promise<T>;
}

async function retried<T>(run: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (error) {
      if (attempt >= ATTEMPTS || !isRetryable(error)) throw error;
      countRetry(error);
      // Exponential with full jitter (5 ms doubling, capped at 200 ms): contenders spread apart instead of colliding again.
      await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(200, 5 * 2 ** attempt)));
    }
  }
}


