import { sql } from "kysely";
import { errorForLog, type Logger } from "../logger.js";
import { inTransaction } from "./sql.js";
import type { Db } from "./types.js";

/**
 * How often the tables are looked at. Each look tends to one table at most,
 * the one furthest past its rule: on the embedded database the upkeep runs on
 * its one backend, and requests wait for it, so it goes in short steps.
 */
export const UPKEEP_EVERY_MS = 5_000;

/**
 * PostgreSQL's autovacuum rule, with its default settings: a table is vacuumed
 * once its dead rows pass 50 plus a fifth of its rows, and analyzed once the
 * rows changed since it last was pass 50 plus a tenth.
 */
const VACUUM = { threshold: 50, scale: 0.2 };
const ANALYZE = { threshold: 50, scale: 0.1 };

/** Only one process of a PostgreSQL database looks at a time (a transaction-level advisory lock on this key). */
const UPKEEP_LOCK = 0x1e57_ca7e;

type TableStats = { schema: string; table: string; live: number; dead: number; changed: number };
type Need = { did: "vacuum" | "analyze"; past: number };

/**
 * What a table needs now by autovacuum's rule, and how far past it:
 * `vacuum (analyze)` first (where the upkeep vacuums at all), then `analyze`.
 */
export function upkeepOf({ live, dead, changed }: Pick<TableStats, "live" | "dead" | "changed">, vacuums = true): Need | undefined {
  const vacuum = dead / (VACUUM.threshold + VACUUM.scale * live);
  if (vacuums && vacuum > 1) return { did: "vacuum", past: vacuum };
  const analyze = changed / (ANALYZE.threshold + ANALYZE.scale * live);
  if (analyze > 1) return { did: "analyze", past: analyze };
  return undefined;
}

/**
 * The table furthest past its rule, among the service's own: those of its
 * schema (the first on its search path, where its migrations create them)
 * that its role owns (no other may be vacuumed or analyzed).
 */
async function neediest(db: Db, vacuums: boolean): Promise<(Need & { schema: string; table: string }) | undefined> {
  const { rows } = await sql<TableStats>`
    select s.schemaname as schema, s.relname as table, s.n_live_tup::float8 as live, s.n_dead_tup::float8 as dead, s.n_mod_since_analyze::float8 as changed
    from pg_stat_user_tables as s join pg_class as c on c.oid = s.relid
    where s.schemaname = current_schema() and pg_has_role(c.relowner, 'USAGE')`.execute(db);
  // A vacuum (which analyzes too) before any analyze; then the table furthest past its rule.
  const rank = (need: Need) => (need.did === "vacuum" ? 1e12 : 0) + need.past;
  let next: (Need & { schema: string; table: string }) | undefined;
  for (const stats of rows) {
    const need = upkeepOf(stats, vacuums);
    if (need && (!next || rank(need) > rank(next))) next = { schema: stats.schema, table: stats.table, ...need };
  }
  return next;
}

/**
 * Runs what autovacuum would run now, on the table furthest past its rule.
 *
 * The embedded database has no autovacuum (it is one backend, with no
 * background workers): without this, dead rows would pile up for good, and the
 * planner would keep the plans it made while the tables were empty (a prepared
 * statement's plan is only made again when its tables are analyzed): a scan of
 * every job, say, where an index would read a few. There it vacuums and analyzes.
 *
 * On PostgreSQL, autovacuum vacuums and analyzes, but looks only once a
 * minute: a table that grows from empty under a burst of pushes is planned on
 * the statistics of an empty table until then. There the upkeep only analyzes,
 * as soon as autovacuum's rule says to, and one process at a time.
 * Returns what it did.
 */
export async function upkeep(db: Db, database: "embedded" | "postgres"): Promise<{ table: string; did: "vacuum" | "analyze" } | undefined> {
  if (database === "embedded") {
    const next = await neediest(db, true);
    if (!next) return undefined;
    const table = sql.table(`${next.schema}.${next.table}`);
    await (next.did === "vacuum" ? sql`vacuum (analyze) ${table}` : sql`analyze ${table}`).execute(db);
    return { table: next.table, did: next.did };
  }
  return inTransaction(db, async (trx) => {
    const { rows } = await sql<{ mine: boolean }>`select pg_try_advisory_xact_lock(${UPKEEP_LOCK}) as mine`.execute(trx);
    if (!rows[0]?.mine) return undefined;
    const next = await neediest(trx, false);
    if (!next) return undefined;
    // Sampling a big table may outlast a request's statement timeout.
    await sql`set local statement_timeout = '60s'`.execute(trx);
    await sql`analyze ${sql.table(`${next.schema}.${next.table}`)}`.execute(trx);
    return { table: next.table, did: "analyze" as const };
  });
}

/** Runs `upkeep` every `everyMs` until stopped. */
export function startUpkeep(db: Db, database: "embedded" | "postgres", logger: Logger, everyMs = UPKEEP_EVERY_MS): () => Promise<void> {
  let running: Promise<void> | undefined;
  const timer = setInterval(() => {
    if (running) return;
    const started = Date.now();
    running = upkeep(db, database)
      .then((done) => {
        if (done) logger.debug({ ...done, ms: Date.now() - started }, "database upkeep");
      })
      .catch((error: unknown) => logger.warn({ err: errorForLog(error) }, "database upkeep failed"))
      .finally(() => {
        running = undefined;
      });
  }, everyMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}
