import { sql } from "kysely";
import type pg from "pg";
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { UploadSlots } from "../imports/upload.js";
import type { AccessCache } from "../tenancy/access.js";
import { retries } from "../db/sql.js";
import type { Db } from "../db/types.js";
import { gathered } from "../records/gathered.js";
import { togetherFailed } from "../records/write-path.js";

/** Automations that ended failed in the last hour, by flow: read from the index of failed jobs, never every job. */
export const failedInLastHour = sql<{ flow: string; n: number }>`
  select flow, count(*)::int as n from automation_jobs where status = 'failed' and finished_at > now() - interval '1 hour' group by flow`;

type DueByFlow = { flow: string; n: number; age: number | null };
type QueueFigures = { due: DueByFlow[]; failures: Array<{ flow: string; n: number }> };

/** The automation queue as it is now: the due jobs of each flow and the oldest one's wait, and the failures of the last hour; undefined when the database cannot answer. */
async function readQueue(db: Db): Promise<QueueFigures | undefined> {
  try {
    const due = await sql<DueByFlow>`
      select flow, count(*)::int as n, extract(epoch from now() - min(run_at))::float8 as age
      from automation_jobs where status in ('pending', 'running') and run_at <= now() group by flow`.execute(db);
    const failures = await failedInLastHour.execute(db);
    return { due: due.rows, failures: failures.rows };
  } catch {
    return undefined;
  }
}

/** The registry /metrics reads, and the two instruments every answered call counts in (by route template, method, status). */
export type Metrics = { registry: Registry; requests: Counter<"route" | "method" | "status">; latency: Histogram<"route" | "method"> };

/**
 * What an operator watches, in Prometheus' text format at /metrics (guarded by
 * the admin token): requests by route template and status with their latency,
 * the automation backlog and the age of its oldest due job by flow, failed
 * automations, and the database pool. Backlog figures are read from the
 * database at each scrape, so every process reports the same queue.
 */
export function createMetrics(db: Db, pool: pg.Pool | undefined, accessCache?: AccessCache, uploads?: UploadSlots): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const requests = new Counter({ name: "http_requests_total", help: "Requests answered, by route template, method and status", labelNames: ["route", "method", "status"], registers: [registry] });
  const latency = new Histogram({
    name: "http_request_duration_seconds",
    help: "Time to answer, by route template and method",
    labelNames: ["route", "method"],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });

  // The queue's figures are read once a scrape, by whichever of their gauges asks first: prom-client collects every
  // metric at once, so a gauge filled by another's collect would print what the scrape before it read.
  let reading: Promise<QueueFigures | undefined> | undefined;
  const queue = () => (reading ??= readQueue(db).finally(() => (reading = undefined)));
  /** A gauge by flow of the queue's figures: left as it was when they could not be read (see `automation_queue_scrape_ok`). */
  const byFlow = (name: string, help: string, values: (figures: QueueFigures) => Array<{ flow: string; value: number }>) =>
    new Gauge({
      name,
      help,
      labelNames: ["flow"],
      registers: [registry],
      async collect() {
        const figures = await queue();
        if (!figures) return;
        this.reset();
        for (const { flow, value } of values(figures)) this.set({ flow }, value);
      },
    });
  byFlow("automation_backlog", "Automation jobs due and not finished, by flow", ({ due }) => due.map((row) => ({ flow: row.flow, value: row.n })));
  byFlow("automation_oldest_due_seconds", "How long the oldest due job of each flow has waited", ({ due }) => due.map((row) => ({ flow: row.flow, value: row.age ?? 0 })));
  byFlow("automation_failed_last_hour", "Automations that ended failed in the last hour, by flow", ({ failures }) => failures.map((row) => ({ flow: row.flow, value: row.n })));
  new Gauge({
    name: "automation_queue_scrape_ok",
    help: "1 when the queue figures above could be read from the database",
    registers: [registry],
    async collect() {
      this.set((await queue()) ? 1 : 0);
    },
  });

  if (accessCache) {
    new Counter({
      name: "access_cache_lookups_total",
      help: "Key and store lookups of this process, by whether memory answered them (hit) or the database (miss)",
      labelNames: ["result"],
      registers: [registry],
      collect() {
        this.reset();
        this.inc({ result: "hit" }, accessCache.hits);
        this.inc({ result: "miss" }, accessCache.misses);
      },
    });
  }

  new Counter({
    name: "db_retries_total",
    help: "Statements and transactions of this process run again after PostgreSQL refused them, by reason (deadlock, serialization, stale_plan, timeout, lock_order)",
    labelNames: ["reason"],
    registers: [registry],
    collect() {
      this.reset();
      for (const [reason, count] of Object.entries(retries)) this.inc({ reason }, count);
    },
  });

  new Counter({
    name: "batch_writes_item_by_item_total",
    help: "Set-based writes of a batch or an import's chunk that failed for a reason of the service's own and were written again item by item (an item whose write the database refused; anything else is a bug)",
    registers: [registry],
    collect() {
      this.reset();
      this.inc(togetherFailed.count);
    },
  });

  new Counter({
    name: "push_writes_total",
    help: "Writes this process made for single pushes, by how many pushes each carried (one, or several that arrived together)",
    labelNames: ["pushes"],
    registers: [registry],
    collect() {
      this.reset();
      this.inc({ pushes: "one" }, gathered.alone);
      this.inc({ pushes: "several" }, gathered.writes - gathered.alone);
    },
  });
  new Gauge({
    name: "pushes_waiting",
    help: "Single pushes waiting now for a write of their store to end, to be written together",
    registers: [registry],
    collect() {
      this.set(gathered.waiting);
    },
  });
  new Counter({
    name: "pushes_written_together_total",
    help: "Single pushes this process wrote together with others that arrived at the same time",
    registers: [registry],
    collect() {
      this.reset();
      this.inc(gathered.pushes - gathered.alone);
    },
  });

  if (uploads) {
    new Gauge({ name: "import_uploads_receiving", help: "Import files this process is receiving now (at most IMPORT_UPLOADS_AT_ONCE)", registers: [registry], collect() { this.set(uploads.busy); } });
    new Counter({
      name: "import_upload_chunks_total",
      help: "Chunks of import files this process has received and stored",
      registers: [registry],
      collect() {
        this.reset();
        this.inc(uploads.chunks);
      },
    });
  }

  if (pool) {
    new Gauge({ name: "db_pool_connections", help: "PostgreSQL connections of this process", registers: [registry], collect() { this.set(pool.totalCount); } });
    new Gauge({ name: "db_pool_in_use", help: "Connections in use", registers: [registry], collect() { this.set(pool.totalCount - pool.idleCount); } });
    new Gauge({ name: "db_pool_waiting", help: "Requests waiting for a connection", registers: [registry], collect() { this.set(pool.waitingCount); } });
  }

  return {
    registry,
    requests,
    latency,
  };
}
