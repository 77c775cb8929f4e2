// `pnpm bench`: throughput, latency and memory of the built server under a steady push load.
// Runs on PostgreSQL when DATABASE_URL is set, else on a fresh embedded database.
// Load comes from this process over loopback; the server runs as its own process.
import { spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";

const { values } = parseArgs({
  options: {
    duration: { type: "string", default: "10" },
    concurrency: { type: "string", default: "16" },
  },
});
const durationMs = Number(values.duration) * 1000;
const concurrency = Number(values.concurrency);
const database = process.env.DATABASE_URL ? "postgres" : "embedded";

/**
 * What the service must keep doing on the project's 2-core machine, where the
 * load generator, the server (with its in-process worker) and PostgreSQL share
 * the cores; the run fails when one is missed. The embedded database runs its
 * SQL on the server's own thread, so its floors are lower: it is the
 * no-setup development mode, PostgreSQL is the production one.
 */
const GOALS = {
  embedded: { create: { minRps: 40, maxP99Ms: 1000 }, update: { minRps: 100, maxP99Ms: 500 }, maxRssMb: 700 },
  postgres: { create: { minRps: 120, maxP99Ms: 300 }, update: { minRps: 180, maxP99Ms: 200 }, maxRssMb: 300 },
}[database];

const freePort = () =>
  new Promise((resolve) => {
    const probe = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });

const port = await freePort();
const admin = "bench-admin-token-0123456789";
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "ingest-bench-"));
// BENCH_NODE_FLAGS="--cpu-prof --cpu-prof-dir=prof" profiles the server.
const nodeFlags = (process.env.BENCH_NODE_FLAGS ?? "").split(" ").filter(Boolean);
const server = spawn(process.execPath, [...nodeFlags, path.join(import.meta.dirname, "../dist/main.js")], {
  env: { ...process.env, PORT: String(port), DATA_DIR: dataDir, ADMIN_TOKEN: admin, SEED_DEMO: "false", RATE_LIMIT_REQUESTS: "0", LOG_LEVEL: "error" },
  stdio: ["ignore", "ignore", "inherit"],
});
const base = `http://127.0.0.1:${port}`;
for (let i = 0; ; i++) {
  try {
    if ((await fetch(`${base}/readyz`)).ok) break;
  } catch {}
  if (i > 300) throw new Error("the server did not start");
  await new Promise((r) => setTimeout(r, 100));
}

const call = async (method, pathname, body, token) => {
  const res = await fetch(base + pathname, {
    method,
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
};
const team = (await call("POST", "/admin/v1/teams", { name: "bench" }, admin)).body;
const store = (await call("POST", "/admin/v1/stores", { team_id: team.id, name: "bench", country: "US" }, admin)).body;
const key = (await call("POST", "/admin/v1/keys", { team_id: team.id, name: "bench" }, admin)).body.key;

const order = (i) => ({
  external_id: `bench-${i}`,
  placed_at: "2026-11-22T10:00:00Z",
  total_price: 19.99 + (i % 100),
  currency: "USD",
  customer: { external_id: `bench-customer-${i % 500}`, phone: `+1202555${String(1000 + (i % 500)).slice(-4)}`, first_name: "Bench" },
  line_items: [{ sku: "SKU-1", quantity: 1, price: 19.99 }],
  tags: ["bench"],
});

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

async function scenario(name, bodyFor, goal, ms = durationMs) {
  const latencies = [];
  let errors = 0;
  let next = 0;
  const end = Date.now() + ms;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (Date.now() < end) {
        const i = next++;
        const started = performance.now();
        const res = await call("POST", `/api/v1/stores/${store.id}/orders`, bodyFor(i), key);
        latencies.push(performance.now() - started);
        if (res.status >= 300) errors++;
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  const rps = latencies.length / (ms / 1000);
  return { name, goal, requests: latencies.length, errors, rps, p50: percentile(latencies, 50), p95: percentile(latencies, 95), p99: percentile(latencies, 99) };
}

const rssMb = () => {
  const status = fs.readFileSync(`/proc/${server.pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
};

console.log(`Benchmark: ${database} database, ${concurrency} concurrent clients, ${durationMs / 1000} s per scenario after a 2 s warm-up, ${os.cpus().length} cores`);
let warm = 0;
await scenario("warm-up", () => ({ ...order(warm), external_id: `warm-${warm++}` }), undefined, 2000);
const created = await scenario("create orders (each with its customer upsert and two automations run by the worker)", (i) => order(i), GOALS.create);
let counter = 0;
const updated = await scenario("update orders (the same keys pushed again)", () => order(counter++ % Math.max(1, created.requests)), GOALS.update);
const rss = rssMb();
server.kill("SIGTERM");

let failed = false;
for (const r of [created, updated]) {
  console.log(
    `  ${r.name}\n    ${r.requests} requests, ${r.errors} errors, ${r.rps.toFixed(0)} req/s, p50 ${r.p50.toFixed(1)} ms, p95 ${r.p95.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms`,
  );
  const missed = r.errors > 0 || r.rps < r.goal.minRps || r.p99 > r.goal.maxP99Ms;
  console.log(`    goal: at least ${r.goal.minRps} req/s, p99 at most ${r.goal.maxP99Ms} ms, no errors: ${missed ? "MISSED" : "met"}`);
  if (missed) failed = true;
}
console.log(`  server memory after the load: ${rss.toFixed(0)} MB RSS (goal: at most ${GOALS.maxRssMb} MB: ${rss > GOALS.maxRssMb ? "MISSED" : "met"})`);
if (rss > GOALS.maxRssMb) failed = true;
console.log(failed ? "Some goals were missed." : "All goals met.");
process.exitCode = failed ? 1 : 0;
