import { sql } from "kysely";
import { errorForLog, type Logger } from "../logger.js";
import type { Db } from "./types.js";

/**
 * How often the embedded database's tables are looked at. Each look tends to
 * one table at most, the one furthest past its rule: the upkeep runs on the
 * database's one backend, and requests wait for it, so it goes in short steps.
 */
export const UPKEEP_EVERY_MS = 5_000;

/**
 * PostgreSQL's autovacuum rule, with its default settings: a table is vacuumed
 * once its dead rows pass 50 plus a fifth of its rows, and analyzed once the
 * rows changed since it last was pass 50 plus a tenth.
 */
const VACUUM = { threshold: 50, scale: 0.2 };
const ANALYZE = { threshold: 50, scale: 0.1 };

type TableStats = { schema: string; table: string; live: number; dead: number; changed: number };

/** What a table needs now by autovacuum's rule, and how far past it: `vacuum (analyze)` first, then `analyze`. */
export function upkeepOf({ live, dead, changed }: Pick<TableStats, "live" | "dead" | "changed">): { did: "vacuum" | "analyze"; past: number } | undefined {
  const vacuum = dead / (VACUUM.threshold + VACUUM.scale * live);
  if (vacuum > 1) return { did: "vacuum", past: vacuum };
  const analyze = changed / (ANALYZE.threshold + ANALYZE.scale * live);
  if (analyze > 1) return { did: "analyze", past: analyze };
  return undefined;
}

/**
 * Runs what autovacuum would run now on the table furthest past its rule: the
 * embedded database has no autovacuum (it is one backend, with no background
 * workers). Without it, dead rows would pile up for good, and the planner
 * would keep the plans it made while the tables were empty (a prepared
 * statement's plan is only made again when its tables are analyzed): a scan of
 * every job, say, where an index would read a few. Returns what it did.
 */
export async function upkeep(db: Db): Promise<{ table: string; did: "vacuum" | "analyze" } | undefined> {
  const { rows } = await sql<TableStats>`
    select schemaname as schema, relname as table, n_live_tup::float8 as live, n_dead_tup::float8 as dead, n_mod_since_analyze::float8 as changed
    from pg_stat_user_tables`.execute(db);
  // A vacuum (which analyzes too) before any analyze; then the table furthest past its rule.
  const rank = (need: { did: "vacuum" | "analyze"; past: number }) => (need.did === "vacuum" ? 1e12 : 0) + need.past;
  let next: { schema: string; table: string; did: "vacuum" | "analyze"; past: number } | undefined;
  for (const stats of rows) {
    const need = upkeepOf(stats);
    if (need && (!next || rank(need) > rank(next))) next = { schema: stats.schema, table: stats.table, ...need };
  }
  if (!next) return undefined;
  const table = sql.table(`${next.schema}.${next.table}`);
  await (next.did === "vacuum" ? sql`vacuum (analyze) ${table}` : sql`analyze ${table}`).execute(db);
  return { table: next.table, did: next.did };
}

/** Runs `upkeep` every `UPKEEP_EVERY_MS` until stopped (the embedded database's autovacuum). */
export function startUpkeep(db: Db, logger: Logger, everyMs = UPKEEP_EVERY_MS): () => Promise<void> {
  let running: Promise<void> | undefined;
  const timer = setInterval(() => {
    if (running) return;
    const started = Date.now();
    running = upkeep(db)
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
