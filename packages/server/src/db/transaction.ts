import type { Transaction } from "kysely";
import { isStalePlan, retries } from "./prepared.js";
import { inSavepoint } from "./sql.js";
import type { Database, Db } from "./types.js";

const RETRYABLE = new Set(["40001", "40P01"]); // serialization_failure, deadlock_detected
/** A wait PostgreSQL cut short: lock_not_available (a lock timeout), query_canceled (the statement timeout). */
const TIMED_OUT = new Set(["55P03", "57014"]);
const ATTEMPTS = 8;

/**
 * A conflict the code found itself, to be run again as a deadlock is: what a
 * transaction read before taking its locks changed before it held them (see
 * the lock order in `docs/architecture.md`).
 */
export class LockOrderConflict extends Error {
  constructor(what: string) {
    super(`${what} changed while its locks were taken`);
    this.name = "LockOrderConflict";
  }
}

/**
 * How long a write may keep being retried after a statement or lock timeout:
 * the request deadline (see `configureRetries`). A wait the statement timeout
 * cut short is run again while the request can still be answered in time, so
 * that a shorter statement timeout never turns a write that would finish into
 * a 503; a frozen server is the client's read timeout, never retried here.
 */
let timeoutRetryBudgetMs = 15_000;

export function configureRetries(options: { timeoutBudgetMs: number }): void {
  timeoutRetryBudgetMs = options.timeoutBudgetMs;
}

const codeOf = (error: unknown) => (error instanceof Error && "code" in error ? String(error.code) : "");

function countRetry(error: unknown): void {
  const code = codeOf(error);
  if (code === "40P01") retries.deadlock++;
  else if (code === "40001") retries.serialization++;
  else if (TIMED_OUT.has(code)) retries.timeout++;
  else if (error instanceof LockOrderConflict) retries.lock_order++;
  else retries.stale_plan++;
}

/**
 * A failure that running the same work again can cure: a deadlock, a
 * serialization failure, a stale plan, a lock order conflict, a lock or
 * statement timeout (this last only while the request deadline allows: see
 * `retried`).
 */
export function isRetryable(error: unknown): boolean {
  return RETRYABLE.has(codeOf(error)) || isStalePlan(error) || error instanceof LockOrderConflict || isTimedOut(error);
}

const isTimedOut = (error: unknown) => TIMED_OUT.has(codeOf(error));

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
  const started = Date.now();
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (error) {
      // A timed-out wait is run again only while the budget lasts: no attempt counts against it.
      const again = isTimedOut(error) ? Date.now() - started < timeoutRetryBudgetMs : attempt < ATTEMPTS && isRetryable(error);
      if (!again) throw error;
      countRetry(error);
      // Exponential with full jitter (5 ms doubling, capped at 200 ms): contenders spread apart instead of colliding again.
      await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(200, 5 * 2 ** attempt)));
    }
  }
}


