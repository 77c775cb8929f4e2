import fs from "node:fs";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { operator, startProcess, stopAll, tempDir, type Proc } from "../test/processes.js";
import { createCluster, faultTestsUnavailable, freePort, unfinishedJobs, type Cluster } from "./cluster.js";

/**
 * The service under faults: a steady load of unique order pushes while its
 * PostgreSQL restarts, stops, crashes and freezes, and while a server and a
 * worker are SIGKILLed. Every acknowledged push must be stored, nothing may
 * answer 500, every answer must come within the deadline, and every stored
 * order must get exactly one post-purchase message.
 */
const ADMIN = "faults-admin-token-0123456789";
/** What bounds a request: the connection wait, the statement timeout, and over all of it the request deadline. */
const TIMEOUTS = { DATABASE_CONNECT_TIMEOUT_MS: "2000", DATABASE_STATEMENT_TIMEOUT_MS: "2000", REQUEST_DEADLINE_MS: "5000" };
const DEADLINE_MS = 5000;
const MARGIN_MS = 2000;
/** Longer than the request deadline: the freeze must be answered by the deadline, not by the thaw. */
const FREEZE_MS = 7000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A push: its id (also sent as its X-Request-Id, so the service's logs name it), its answer's status (0: none), when it started, how long it took. */
type Outcome = { id: string; status: number; at: number; ms: number };

const unavailable = faultTestsUnavailable(Boolean(process.env.CI));

describe.runIf(!unavailable)("faults under load", () => {
  let cluster: Cluster;
  const procs: Proc[] = [];
  let env: Record<string, string>;

  beforeAll(async () => {
    cluster = await createCluster(await freePort());
    env = { DATABASE_URL: cluster.url, ADMIN_TOKEN: ADMIN, SEED_DEMO: "false", DATA_DIR: tempDir(), RATE_LIMIT_REQUESTS: "1000000", JOB_LEASE_SECONDS: "5", WORKER_POLL_MS: "100", ...TIMEOUTS };
  });
  afterAll(async () => {
    await stopAll(procs);
    await cluster?.destroy();
  });

  it("loses no acknowledged push, answers no 500, answers within the deadline, and sends one post-purchase per order", { timeout: 240_000 }, async () => {
    let server = await startProcess("main.js", { ...env, RUN_WORKER: "false", PORT: String(await freePort()) });
    procs.push(server);
    const url = server.url ?? "";
    const port = new URL(url).port;
    let worker = await startProcess("worker.js", env);
    procs.push(worker);
    const team = await operator(url, ADMIN, "POST", "/admin/v1/teams", { name: "Faults" });
    const store = await operator(url, ADMIN, "POST", "/admin/v1/stores", { team_id: team.id, name: "Shop", country: "US" });
    const key = await operator(url, ADMIN, "POST", "/admin/v1/keys", { team_id: team.id, name: "load" });

    const outcomes: Outcome[] = [];
    let loading = true;
    let seq = 0;
    async function client(lane: number) {
      while (loading) {
        const id = `fault-${lane}-${++seq}`;
        const started = Date.now();
        try {
          const res = await fetch(`${url}/api/v1/stores/${String(store.id)}/orders`, {
            method: "POST",
            headers: { Authorization: `Bearer ${String(key.key)}`, "Content-Type": "application/json", "X-Request-Id": id },
            body: JSON.stringify({ external_id: id, placed_at: "2026-11-22T10:00:00Z", total_price: 10, customer: { external_id: `c-${seq % 40}`, phone: `+1415555${String(1000 + (seq % 40))}` } }),
            signal: AbortSignal.timeout(60_000),
          });
          await res.arrayBuffer();
          outcomes.push({ id, status: res.status, at: started, ms: Date.now() - started });
          if (res.status === 503) await sleep(100);
        } catch {
          // No answer at all: the server process is down (SIGKILLed). Not acknowledged.
          outcomes.push({ id, status: 0, at: started, ms: Date.now() - started });
          await sleep(100);
        }
      }
    }
    const lanes = Array.from({ length: 6 }, (_, lane) => client(lane));

    await sleep(2000);
    await cluster.restart();
    await sleep(2000);
    await cluster.stop("fast");
    await sleep(1500);
    await cluster.start();
    await sleep(2000);
    await cluster.stop("immediate"); // a crash
    await cluster.start();
    await sleep(2000);
    await cluster.freeze();
    await sleep(FREEZE_MS);
    await cluster.thaw();
    await sleep(2000);
    server.child.kill("SIGKILL");
    await server.exited;
    server = await startProcess("main.js", { ...env, RUN_WORKER: "false", PORT: port });
    procs.push(server);
    await sleep(1500);
    worker.child.kill("SIGKILL");
    await worker.exited;
    worker = await startProcess("worker.js", env);
    procs.push(worker);
    await sleep(2000);
    loading = false;
    await Promise.all(lanes);

    // Healthy again without a restart of anything.
    expect((await fetch(`${url}/readyz`)).status).toBe(200);

    const db = new pg.Client({ connectionString: cluster.url });
    await db.connect();
    try {
      // The worker drains what the load left (a killed worker's jobs come back after their lease).
      await expect.poll(() => unfinishedJobs(db), { timeout: 60_000, interval: 500 }).toBe(0);

      const acknowledged = outcomes.filter((outcome) => outcome.status === 201 || outcome.status === 200).map((outcome) => outcome.id);
      const stored = new Set((await db.query<{ external_id: string }>("select external_id from orders")).rows.map((row) => row.external_id));
      const missing = acknowledged.filter((id) => !stored.has(id));
      const perOrder = await db.query<{ external_id: string; messages: string }>(
        `select o.external_id, count(m.job_id) as messages
         from orders o
         left join automation_jobs j on j.flow = 'post_purchase' and j.record_id = o.id
         left join messages m on m.job_id = j.id
         group by o.external_id`,
      );
      const notOnce = perOrder.rows.filter((row) => Number(row.messages) !== 1);
      const answered = outcomes.filter((outcome) => outcome.status !== 0);
      const summary = {
        requests: outcomes.length,
        acknowledged: acknowledged.length,
        stored: stored.size,
        missing: missing.length,
        "5xx": outcomes.filter((outcome) => outcome.status >= 500).length,
        "500": outcomes.filter((outcome) => outcome.status === 500).length,
        unanswered: outcomes.length - answered.length,
        longestWaitMs: Math.max(...answered.map((outcome) => outcome.ms)),
      };
      console.log(`Fault run: ${JSON.stringify(summary)}`);
      // A run that breaks a promise keeps what tells why: each process's log, the cluster's, and the pushes concerned.
      if (missing.length > 0 || summary["500"] > 0 || notOnce.length > 0 || process.env.KEEP_FAULT_LOGS) {
        const kept = path.join(import.meta.dirname, "artifacts", new Date().toISOString().replace(/[:.]/g, "-"));
        fs.mkdirSync(kept, { recursive: true });
        procs.forEach((proc, index) => fs.writeFileSync(path.join(kept, `process-${index}.log`), proc.output()));
        fs.copyFileSync(cluster.log, path.join(kept, "postgres.log"));
        const concerned = new Set([...missing, ...notOnce.map((row) => row.external_id)]);
        fs.writeFileSync(path.join(kept, "summary.json"), JSON.stringify({ summary, missing, notOnce, outcomes: outcomes.filter((outcome) => concerned.has(outcome.id) || outcome.status === 500) }, null, 2));
        console.log(`Fault run kept its logs in ${kept}`);
      }

      expect(acknowledged.length).toBeGreaterThan(50);
      expect(missing).toEqual([]);
      expect(outcomes.filter((outcome) => outcome.status === 500)).toEqual([]);
      expect(new Set(outcomes.map((outcome) => outcome.status))).toEqual(new Set([0, 201, 503].filter((status) => outcomes.some((outcome) => outcome.status === status))));
      expect(summary.longestWaitMs).toBeLessThan(DEADLINE_MS + MARGIN_MS);
      expect(notOnce).toEqual([]);
    } finally {
      await db.end();
    }
  });
});

describe.runIf(!unavailable)("shutdown with the database frozen", () => {
  it("ends within SHUTDOWN_TIMEOUT_MS", { timeout: 60_000 }, async () => {
    const cluster = await createCluster(await freePort());
    const procs: Proc[] = [];
    try {
      const env = { DATABASE_URL: cluster.url, ADMIN_TOKEN: ADMIN, SEED_DEMO: "false", DATA_DIR: tempDir(), SHUTDOWN_TIMEOUT_MS: "3000", ...TIMEOUTS };
      const server = await startProcess("main.js", env);
      procs.push(server);
      await cluster.freeze();
      // A request stuck on the frozen database is in flight when the signal comes.
      const inFlight = fetch(`${server.url ?? ""}/readyz`).then((res) => res.status, () => 0);
      await sleep(300);
      const started = Date.now();
      server.child.kill("SIGTERM");
      await server.exited;
      expect(Date.now() - started).toBeLessThan(3000 + 1000);
      expect([0, 503]).toContain(await inFlight);
    } finally {
      await stopAll(procs);
      await cluster.thaw();
      await cluster.destroy();
    }
  });
});
