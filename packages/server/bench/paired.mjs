// Paired runs: two builds of the service side by side, for a change whose effect is smaller than the
// machine's drift between two `pnpm bench` runs.
//
//   node packages/server/bench/paired.mjs <checkout before> <checkout after> [rounds=6] [seconds=10] [scenarios=order-new,customer,batch]
//
// Each checkout must be built (`pnpm --filter @commerce-ingest/server build`). Both services run at once in
// their default configuration (the rate limit raised so it refuses nothing), each on a fresh PostgreSQL
// database (DATABASE_URL's server, else the local one) or, with EMBEDDED=1, a fresh embedded one; with
// RUN_WORKER=false, without their workers (the pushes alone, no job run inside the window measured); with
// CONNECTIONS=n, single pushes on n connections instead of 16. Each
// round runs every scenario on both, alternating which goes first, each run once both services are idle
// (their workers done with the run before), with load.mjs from another process; it prints every round's
// figures and then the medians: requests (records, for batches) a second, and the service's own CPU per
// 1,000 of them, read from /proc around each run.
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { nodeLaunchOf } from "./node-flags.mjs";

const [before, after, rounds = "6", seconds = "10", scenarios = "order-new,customer,batch"] = process.argv.slice(2);
if (!before || !after) throw new Error("usage: paired.mjs <checkout before> <checkout after> [rounds] [seconds] [scenarios]");
const here = import.meta.dirname;
const admin = "bench-admin-token-0123456789abcdef";
const serverUrl = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const embedded = process.env.EMBEDDED === "1";
const connections = Number(process.env.CONNECTIONS ?? 16);

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const freePort = () =>
  new Promise((resolve) => {
    const probe = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
const phone = (i) => `+1202555${String(1000 + (i % 9000)).slice(-4)}`;
/** A process's CPU time so far, in ms (user and system, from /proc). */
const cpuMs = (pid) => {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
};

async function freshDatabase(name) {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  await client.query(`drop database if exists ${name}`);
  await client.query(`create database ${name}`);
  await client.end();
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** One build's service with a store and a key, and 500 orders of history. */
async function start(checkout, name) {
  const port = await freePort();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `paired-${name}-`));
  const database = embedded ? {} : { DATABASE_URL: await freshDatabase(`paired_${name}`) };
  // As `pnpm start` runs it, with the build's own node flags and environment.
  const launch = await nodeLaunchOf(checkout, embedded ? "embedded" : "postgres");
  const env = { PATH: process.env.PATH, ...launch.env, PORT: String(port), ADMIN_TOKEN: admin, SEED_DEMO: "false", RUN_WORKER: process.env.RUN_WORKER ?? "true", RATE_LIMIT_REQUESTS: "100000000", DATA_DIR: dataDir, ...database };
  const child = spawn(process.execPath, [...launch.flags, path.join(checkout, "packages/server/dist/main.js")], { env, stdio: ["ignore", "ignore", "inherit"] });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 600; i++) {
    try {
      if ((await fetch(`${url}/readyz`)).ok) break;
    } catch {}
    await sleep(100);
  }
  const call = async (method, pathname, body, token = admin, headers = {}) =>
    (await fetch(url + pathname, { method, headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json", ...headers }, body: JSON.stringify(body) })).json();
  const team = await call("POST", "/admin/v1/teams", { name: "bench" });
  const store = await call("POST", "/admin/v1/stores", { team_id: team.id, name: "bench", country: "US", recovery_delay_seconds: 0 });
  const { key } = await call("POST", "/admin/v1/keys", { team_id: team.id, name: "bench" });
  const seed = Array.from({ length: 500 }, (_, i) => ({ external_id: `seed-${i}`, placed_at: "2026-11-01T10:00:00Z", total_price: 10, customer: { phone: phone(i) } }));
  await call("POST", `/api/v1/stores/${store.id}/orders/batch`, { items: seed }, key, { "X-Backfill": "true" });
  return { child, url, key, storeId: store.id, dataDir };
}

/** One scenario on one service: requests a second (records, for batches). */
function run(service, kind, tag) {
  const batch = kind === "batch";
  const spec = { url: service.url, key: service.key, storeId: service.storeId, kind, connections: batch ? 2 : connections, seconds: Number(seconds), batch: batch ? 1000 : 1, prefix: `${tag}-${Date.now()}` };
  const result = JSON.parse(execFileSync(process.execPath, [path.join(here, "load.mjs"), JSON.stringify(spec)], { encoding: "utf8" }));
  if (result.non2xx || result.errors) console.error(`${kind} on ${tag}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  return batch ? result.rps * 1000 : result.rps;
}

const services = { before: await start(before, "before"), after: await start(after, "after") };
/** Waits until neither service is busy: their workers are done with the jobs of the run before. */
async function idle() {
  for (let i = 0; i < 120; i++) {
    const busy = cpuMs(services.before.child.pid) + cpuMs(services.after.child.pid);
    await sleep(1000);
    if (cpuMs(services.before.child.pid) + cpuMs(services.after.child.pid) - busy < 50) return;
  }
}

const results = {};
const record = (name, side, value) => ((results[name] ??= { before: [], after: [] })[side]).push(Math.round(value));
try {
  for (let round = 0; round < Number(rounds); round++) {
    for (const kind of scenarios.split(",")) {
      const sides = round % 2 === 0 ? ["before", "after"] : ["after", "before"];
      for (const side of sides) {
        await idle();
        const service = services[side];
        const cpu = cpuMs(service.child.pid);
        const rate = run(service, kind, `${side}${round}`);
        record(kind, side, rate);
        record(`${kind}, CPU ms per 1,000`, side, ((cpuMs(service.child.pid) - cpu) * 1000) / (rate * Number(seconds)));
      }
    }
    console.log(JSON.stringify(results));
  }
  const median = (values) => {
    const sorted = [...values].sort((a, b) => a - b);
    return sorted.length % 2 ? sorted[(sorted.length - 1) / 2] : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2;
  };
  for (const [name, { before: b, after: a }] of Object.entries(results)) console.log(`${name}: median before ${median(b)}, after ${median(a)}, after / before ${(median(a) / median(b)).toFixed(2)}`);
} finally {
  for (const service of Object.values(services)) {
    service.child.kill("SIGTERM");
    await new Promise((resolve) => service.child.once("exit", resolve));
    fs.rmSync(service.dataDir, { recursive: true, force: true });
  }
}
