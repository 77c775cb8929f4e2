import fs from "node:fs";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { operator, startProcess, stopAll, tempDir, type Proc } from "../test/processes.js";
import { createCluster, faultTestsUnavailable, freePort, unfinishedJobs, type Cluster } from "./cluster.js";

/**
 * An ordinary day on a healthy database, made hard: two server processes and a
 * worker process of their own, sixteen clients pushing orders whose customers
 * share phones (24 customers on 12 phones), patching those orders, erasing
 * those customers and pushing batches of 40 orders on them, all at once. Every
 * writer takes its row locks in one order, so nothing may deadlock or wait out
 * a timeout: no 5xx, no `deadlock detected` and no timeout in PostgreSQL's log
 * (which logs every lock wait longer than a second), every acknowledged write
 * stored as it was last acknowledged, and nothing sent to an erased customer.
 */
const ADMIN = "contention-admin-token-0123456789";
const SECONDS = Number(process.env.CONTENTION_SECONDS ?? 60);
const LANES = 16;
const CUSTOMERS = 24;
const PHONES = 12;
/** Orders each lane owns: a lane's writes to its own orders are sequential, so each order's last acknowledged write is known. */
const ORDERS_PER_LANE = 80;

const unavailable = faultTestsUnavailable(Boolean(process.env.CI));

type Expected = { total: string; financial: string | null; customer: string };

const pick = <T,>(list: readonly T[]): T => list[Math.floor(Math.random() * list.length)] as T;
const customerOf = (i: number) => ({ external_id: `cust-${i}`, phone: `+1415555${String(2000 + (i % PHONES))}`, first_name: `Name ${i}` });

describe.runIf(!unavailable)("contention on a healthy database", () => {
  let cluster: Cluster;
  const procs: Proc[] = [];

  beforeAll(async () => {
    // Every lock wait over a second is logged: a wait that long is what would turn into a timeout.
    cluster = await createCluster(await freePort(), { log_lock_waits: "on", deadlock_timeout: "1s" });
  });
  afterAll(async () => {
    await stopAll(procs);
    await cluster?.destroy();
  });

  it("answers no 5xx, logs no deadlock or timeout, keeps every acknowledged write, sends nothing to the erased", { timeout: (SECONDS + 180) * 1000 }, async () => {
    const env = { DATABASE_URL: cluster.url, ADMIN_TOKEN: ADMIN, SEED_DEMO: "false", RATE_LIMIT_REQUESTS: "0", LOG_LEVEL: "warn" };
    const server = await startProcess("main.js", { ...env, DATA_DIR: tempDir(), CLUSTER_WORKERS: "2", RUN_WORKER: "false", PORT: String(await freePort()), LOG_LEVEL: "info" });
    procs.push(server);
    const url = server.url ?? "";
    procs.push(await startProcess("worker.js", { ...env, DATA_DIR: tempDir(), LOG_LEVEL: "info" }));
    const team = await operator(url, ADMIN, "POST", "/admin/v1/teams", { name: "Contention" });
    const store = await operator(url, ADMIN, "POST", "/admin/v1/stores", { team_id: team.id, name: "Shop", country: "US" });
    const key = await operator(url, ADMIN, "POST", "/admin/v1/keys", { team_id: team.id, name: "load" });
    const api = `${url}/api/v1/stores/${String(store.id)}`;
    const headers = { Authorization: `Bearer ${String(key.key)}`, "Content-Type": "application/json" };

    const expected = new Map<string, Expected>();
    const counts: Record<string, number> = {};
    const failures: Array<{ op: string; status: number; body: string }> = [];
    let records = 0;
    const call = async (op: string, method: string, pathname: string, body?: unknown) => {
      const res = await fetch(api + pathname, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal: AbortSignal.timeout(60_000) }).catch(
        () => undefined,
      );
      const text = res ? await res.text() : "";
      const status = res?.status ?? 0;
      counts[`${op} ${status}`] = (counts[`${op} ${status}`] ?? 0) + 1;
      if (status === 0 || status >= 500) failures.push({ op, status, body: text.slice(0, 300) });
      return { status, text };
    };

    const orderBody = (id: string) => {
      const customer = customerOf(Math.floor(Math.random() * CUSTOMERS));
      const total = (Math.floor(Math.random() * 100_000) / 100).toFixed(2);
      const financial = pick(["pending", "paid", "refunded"]);
      return { body: { external_id: id, placed_at: "2026-11-22T10:00:00Z", total_price: Number(total), financial_status: financial, customer }, expected: { total, financial, customer: customer.external_id } };
    };

    let running = true;
    async function lane(n: number) {
      const orderId = () => `L${n}-${Math.floor(Math.random() * ORDERS_PER_LANE)}`;
      while (running) {
        const roll = Math.random();
        if (roll < 0.55) {
          const { body, expected: value } = orderBody(orderId());
          const { status } = await call("push", "POST", "/orders", body);
          if (status === 200 || status === 201) expected.set(body.external_id, value);
          records++;
        } else if (roll < 0.75) {
          const id = orderId();
          const financial = pick(["paid", "refunded", "partially_refunded"]);
          const { status } = await call("patch", "PATCH", `/orders/${id}`, { financial_status: financial, tags: [financial] });
          const known = expected.get(id);
          if (status === 200 && known) expected.set(id, { ...known, financial });
        } else if (roll < 0.85) {
          await call("erase", "DELETE", `/customers/${customerOf(Math.floor(Math.random() * CUSTOMERS)).external_id}`);
        } else {
          // 40 of the lane's orders, each once, in no particular order.
          const ids = Array.from({ length: ORDERS_PER_LANE }, (_, i) => `L${n}-${i}`)
            .sort(() => Math.random() - 0.5)
            .slice(0, 40);
          const items = ids.map(orderBody);
          const { status, text } = await call("batch", "POST", "/orders/batch", { items: items.map((item) => item.body) });
          if (status === 200) {
            const { results } = JSON.parse(text) as { results: Array<{ status: number }> };
            results.forEach((result, index) => {
              const item = items[index];
              if (item && (result.status === 200 || result.status === 201)) expected.set(item.body.external_id, item.expected);
              else failures.push({ op: "batch item", status: result.status, body: JSON.stringify(result).slice(0, 300) });
            });
          }
          records += items.length;
        }
      }
    }
    const started = Date.now();
    const lanes = Array.from({ length: LANES }, (_, n) => lane(n));
    await new Promise((resolve) => setTimeout(resolve, SECONDS * 1000));
    running = false;
    await Promise.all(lanes);
    const seconds = (Date.now() - started) / 1000;

    const db = new pg.Client({ connectionString: cluster.url });
    await db.connect();
    try {
      // The worker drains what the load left.
      await expect.poll(() => unfinishedJobs(db), { timeout: 60_000, interval: 500 }).toBe(0);
      const stored = await db.query<{ external_id: string; total_price: string; financial_status: string | null; customer: string }>(
        "select o.external_id, o.total_price::text, o.financial_status, c.external_id as customer from orders o join customers c on c.id = o.customer_id",
      );
      const byId = new Map(stored.rows.map((row) => [row.external_id, row]));
      const differing = [...expected].flatMap(([id, value]) => {
        const row = byId.get(id);
        const actual = row && { total: Number(row.total_price).toFixed(2), financial: row.financial_status, customer: row.customer };
        return JSON.stringify(actual) === JSON.stringify(value) ? [] : [{ id, expected: value, actual }];
      });
      // Nothing after an erasure: its transaction redacts every message of the customer committed before it,
      // so a message that still names the phone, or says what it said, was made after it.
      const toErased = await db.query(
        `select m.id, m.flow, m.created_at, c.deleted_at, m.to_phone from messages m join customers c on c.id = m.customer_id
         where c.deleted_at is not null and (m.to_phone is not null or m.content <> '{"redacted": true}'::jsonb)`,
      );
      const log = fs.readFileSync(cluster.log, "utf8");
      const lines = (pattern: RegExp) => log.split("\n").filter((line) => pattern.test(line));
      const deadlocks = lines(/deadlock detected/);
      const timeouts = lines(/canceling statement due to (statement|lock) timeout|lock timeout/);
      const waits = lines(/still waiting for/);
      const erasures = Number((await db.query("select count(*) as n from customers where deleted_at is not null")).rows[0].n);
      const messages = Number((await db.query("select count(*) as n from messages")).rows[0].n);
      const summary = {
        seconds: Math.round(seconds),
        requests: Object.values(counts).reduce((sum, n) => sum + n, 0),
        recordsPerSecond: Math.round(records / seconds),
        answers: counts,
        "5xx": failures.filter((failure) => failure.status >= 500).length,
        unanswered: failures.filter((failure) => failure.status === 0).length,
        deadlocks: deadlocks.length,
        timeouts: timeouts.length,
        lockWaitsOver1s: waits.length,
        ordersChecked: expected.size,
        differing: differing.length,
        erasures,
        messages,
        toErased: toErased.rowCount,
      };
      console.log(`Contention run: ${JSON.stringify(summary)}`);
      if (failures.length > 0 || deadlocks.length > 0 || timeouts.length > 0 || differing.length > 0 || toErased.rows.length > 0 || process.env.KEEP_FAULT_LOGS) {
        const kept = path.join(import.meta.dirname, "artifacts", `contention-${new Date().toISOString().replace(/[:.]/g, "-")}`);
        fs.mkdirSync(kept, { recursive: true });
        procs.forEach((proc, index) => fs.writeFileSync(path.join(kept, `process-${index}.log`), proc.output()));
        fs.copyFileSync(cluster.log, path.join(kept, "postgres.log"));
        fs.writeFileSync(path.join(kept, "summary.json"), JSON.stringify({ summary, failures: failures.slice(0, 50), differing: differing.slice(0, 50), toErased: toErased.rows }, null, 2));
        console.log(`Contention run kept its logs in ${kept}`);
      }

      expect(expected.size).toBeGreaterThan(LANES * 10);
      expect(failures).toEqual([]);
      expect(deadlocks).toEqual([]);
      expect(timeouts).toEqual([]);
      expect(differing).toEqual([]);
      expect(toErased.rows).toEqual([]);
    } finally {
      await db.end();
    }
  });
});
