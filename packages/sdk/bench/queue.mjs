// The SDK's push queue against awaited single pushes: 10,000 orders each way, on PostgreSQL (DATABASE_URL's
// server, else the local one), the service built and started with its defaults but the rate limit off.
//
//   pnpm --filter @commerce-ingest/sdk build && pnpm --filter @commerce-ingest/server build && node packages/sdk/bench/queue.mjs [count]
import { spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { CommerceIngestClient } from "../dist/index.js";

const COUNT = Number(process.argv[2] ?? 10_000);
const here = import.meta.dirname;
const admin = "bench-admin-token-0123456789abcdef";
const serverUrl = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const freePort = () => new Promise((resolve) => { const probe = net.createServer().listen(0, "127.0.0.1", () => { const { port } = probe.address(); probe.close(() => resolve(port)); }); });

const dbName = `bench_queue_${Date.now()}`;
const adminDb = new pg.Client({ connectionString: serverUrl });
await adminDb.connect();
await adminDb.query(`create database ${dbName}`);
const url = new URL(serverUrl);
url.pathname = `/${dbName}`;
const port = await freePort();
const child = spawn(process.execPath, [path.join(here, "../../server/dist/main.js")], {
  env: { PATH: process.env.PATH, PORT: String(port), ADMIN_TOKEN: admin, SEED_DEMO: "false", DATABASE_URL: url.toString(), RATE_LIMIT_REQUESTS: "0", DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), "bench-queue-")) },
  stdio: ["ignore", "ignore", "inherit"],
});
const base = `http://127.0.0.1:${port}`;
try {
  for (let i = 0; ; i++) {
    if ((await fetch(`${base}/readyz`).catch(() => undefined))?.ok) break;
    if (i > 600) throw new Error("the service did not start");
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const call = async (method, pathname, body) => (await fetch(base + pathname, { method, headers: { Authorization: `Bearer ${admin}`, "Content-Type": "application/json" }, body: JSON.stringify(body) })).json();
  const team = await call("POST", "/admin/v1/teams", { name: "Bench" });
  const store = await call("POST", "/admin/v1/stores", { team_id: team.id, name: "Shop", country: "US" });
  const { key } = await call("POST", "/admin/v1/keys", { team_id: team.id, name: "bench" });
  const client = new CommerceIngestClient({ apiKey: key, baseUrl: base });
  const order = (run, i) => ({ external_id: `${run}-${i}`, placed_at: "2026-11-20T14:03:00Z", total_price: 10 + (i % 90), currency: "USD", customer: { external_id: `c-${i % 500}`, phone: `+1415555${String(1000 + (i % 500))}` }, line_items: [{ sku: `SKU-${i % 40}`, quantity: 1 }] });

  const timed = async (name, work) => {
    const started = performance.now();
    await work();
    const seconds = (performance.now() - started) / 1000;
    return { name, records: COUNT, seconds: Number(seconds.toFixed(2)), recordsPerSecond: Math.round(COUNT / seconds) };
  };
  const single = await timed("awaited single pushes", async () => {
    for (let i = 0; i < COUNT; i++) await client.orders.upsert(store.id, order("single", i));
  });
  const queued = await timed("the same through client.queue()", async () => {
    const queue = client.queue(store.id);
    const answers = [];
    for (let i = 0; i < COUNT; i++) answers.push(queue.orders.push(order("queued", i)));
    await Promise.all(answers);
    await queue.close();
  });
  console.log(JSON.stringify({ date: new Date().toISOString().slice(0, 10), machine: `${os.cpus().length} × ${os.cpus()[0]?.model.trim()}`, results: [single, queued], ratio: Number((queued.recordsPerSecond / single.recordsPerSecond).toFixed(1)) }, null, 2));
} finally {
  child.kill("SIGTERM");
  await new Promise((resolve) => child.once("exit", resolve));
  await adminDb.query(`drop database if exists ${dbName} with (force)`);
  await adminDb.end();
}
