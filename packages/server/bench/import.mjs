/**
 * `pnpm bench` (after run.mjs): a shop's history imported, from the first byte of the upload to `succeeded`:
 * orders with embedded customers, and customers alone, on PostgreSQL; beside each, in the same run, the
 * database alone: COPY of the same rows into an unlogged stage, then one set-based statement per table in one
 * transaction (the floor of this schema); another team's single pushes while an import runs, beside the same
 * pushes alone; and the embedded database's figures, these two once the cluster's autovacuums have ended (the
 * imports' database dropped first). Writes docs/imports-bench.md and docs/imports-bench.json.
 *
 * `--pair <checkout before>,<checkout after> [--kind orders|customers] [--lines 200000] [--rounds 4]` instead
 * runs two builds' imports side by side and prints their CPU per record (see `sideBySide`); each checkout must be
 * built.
 */
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { createGzip } from "node:zlib";
import { pipeline } from "node:stream/promises";
import { Readable } from "node:stream";
import pg from "pg";
import { nodeLaunchOf } from "./node-flags.mjs";

const { values } = parseArgs({
  options: {
    orders: { type: "string", default: "1000000" },
    customers: { type: "string", default: "1000000" },
    embedded: { type: "string", default: "100000" },
    "distinct-customers": { type: "string", default: "50000" },
    live: { type: "string", default: "400000" },
    "live-seconds": { type: "string", default: "15" },
    // `--pair <checkout before>,<checkout after>`: the two builds' imports side by side instead (see `sideBySide`).
    pair: { type: "string" },
    kind: { type: "string", default: "orders" },
    lines: { type: "string", default: "200000" },
    rounds: { type: "string", default: "4" },
  },
});
const ORDERS = Number(values.orders);
const CUSTOMERS = Number(values.customers);
const EMBEDDED = Number(values.embedded);
const DISTINCT = Number(values["distinct-customers"]);
const LIVE = Number(values.live);
const LIVE_SECONDS = Number(values["live-seconds"]);
const here = import.meta.dirname;
const repo = path.resolve(here, "../../..");
const admin = "bench-admin-token-0123456789abcdef";
const serverUrl = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const work = fs.mkdtempSync(path.join(os.tmpdir(), "ingest-import-bench-"));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const freePort = () =>
  new Promise((resolve) => {
    const server = net.createServer();
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });

const phone = (i) => `+1202${String(5_000_000 + i).padStart(7, "0")}`;
/** An order of about 400 bytes: its customer (one of DISTINCT, each with its own phone), two line items, tags. */
const order = (i) => {
  const c = (i * 7919) % DISTINCT;
  return {
    external_id: `o-${i}`,
    placed_at: new Date(Date.UTC(2021, 0, 1) + i * 60_000).toISOString(),
    total_price: ((i % 9973) + 1) / 4,
    currency: "USD",
    financial_status: i % 10 === 0 ? "refunded" : "paid",
    customer: { external_id: `c-${c}`, phone: phone(c), first_name: `First${c}`, last_name: `Last${c}`, email: `c${c}@example.com` },
    line_items: [
      { sku: `SKU-${i % 500}`, title: "T-shirt", quantity: 1 + (i % 3), price: 19.5 },
      { sku: `SKU-${(i + 7) % 500}`, title: "Socks", quantity: 1, price: 4.25 },
    ],
    tags: i % 4 === 0 ? ["web", "returning"] : ["web"],
  };
};
const customer = (i) => ({ external_id: `k-${i}`, phone: phone(i), first_name: `First${i}`, last_name: `Last${i}`, email: `k${i}@example.com`, tags: ["imported"] });

async function writeFile(file, count, make) {
  if (fs.existsSync(file)) return;
  const lines = async function* () {
    let batch = [];
    for (let i = 0; i < count; i++) {
      batch.push(JSON.stringify(make(i)));
      if (batch.length === 5000) {
        yield `${batch.join("\n")}\n`;
        batch = [];
      }
    }
    if (batch.length) yield `${batch.join("\n")}\n`;
  };
  await pipeline(Readable.from(lines()), createGzip({ level: 6 }), fs.createWriteStream(file));
}

async function waitFor(url) {
  for (let i = 0; i < 600; i++) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {}
    await sleep(100);
  }
  throw new Error(`${url} did not come up`);
}

async function startService(env, checkout = repo) {
  const port = await freePort();
  // As `pnpm start` runs it, with the build's own node flags and environment.
  const launch = await nodeLaunchOf(checkout, env.DATABASE_URL ? "postgres" : "embedded");
  const child = spawn(process.execPath, [...launch.flags, path.join(checkout, "packages/server/dist/main.js")], {
    // The defaults (rate limit included), but no demo data; logs at info to /dev/null.
    env: { PATH: process.env.PATH, ...launch.env, PORT: String(port), ADMIN_TOKEN: admin, SEED_DEMO: "false", ...env },
    stdio: ["ignore", "ignore", "inherit"],
  });
  const url = `http://127.0.0.1:${port}`;
  await waitFor(`${url}/readyz`);
  const call = async (method, pathname, body) =>
    (await fetch(url + pathname, { method, headers: { Authorization: `Bearer ${admin}`, "Content-Type": "application/json" }, body: JSON.stringify(body) })).json();
  const team = await call("POST", "/admin/v1/teams", { name: "bench" });
  const store = async (teamId = team.id) => (await call("POST", "/admin/v1/stores", { team_id: teamId, name: "bench", country: "US" })).id;
  const { key } = await call("POST", "/admin/v1/keys", { team_id: team.id, name: "bench" });
  /** Another team, with its store and key: the neighbour whose pushes an import must not slow. */
  const otherTeam = async () => {
    const other = await call("POST", "/admin/v1/teams", { name: "neighbour" });
    return { storeId: await store(other.id), key: (await call("POST", "/admin/v1/keys", { team_id: other.id, name: "neighbour" })).key };
  };
  return { child, url, key, store, otherTeam };
}

const stop = async (child) => {
  child.kill("SIGTERM");
  await new Promise((resolve) => child.once("exit", resolve));
};

const TICK_MS = 1000 / (Number(execFileSync("getconf", ["CLK_TCK"]).toString()) || 100);
/** CPU seconds (user + system) a process has used, from /proc. */
const cpuSeconds = (pid) => {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * TICK_MS) / 1000;
  } catch {
    return 0;
  }
};
/**
 * CPU seconds of PostgreSQL on this machine (the embedded database runs inside the server): every process's, and
 * those of its processes that have exited (a backend whose connection closed, an autovacuum worker done), which
 * the postmaster holds as its children's; counting the living alone, a scenario in which backends exit reads low.
 */
const postgresSeconds = () => {
  let pids = [];
  try {
    pids = execFileSync("pgrep", ["-x", "postgres"]).toString().trim().split("\n").filter(Boolean);
  } catch {}
  const living = new Set(pids);
  let seconds = 0;
  for (const pid of pids) {
    try {
      const fields = fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
      seconds += ((Number(fields[11]) + Number(fields[12])) * TICK_MS) / 1000;
      // A postmaster (its parent is no PostgreSQL process): the CPU of its children that have exited.
      if (!living.has(fields[1])) seconds += ((Number(fields[13]) + Number(fields[14])) * TICK_MS) / 1000;
    } catch {}
  }
  return seconds;
};

const rssMb = (pid) => {
  const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
};

/** Sends an import's file; answers its id once the service took it (202). */
async function upload(service, storeId, kind, file) {
  const res = await fetch(`${service.url}/api/v1/stores/${storeId}/imports?kind=${kind}`, {
    method: "POST",
    headers: { Authorization: `Bearer ${service.key}`, "Content-Type": "application/x-ndjson", "Content-Encoding": "gzip" },
    body: Readable.toWeb(fs.createReadStream(file)),
    duplex: "half",
  });
  const created = await res.json();
  if (res.status !== 202) throw new Error(`upload answered ${res.status}: ${JSON.stringify(created)}`);
  return created.id;
}

/** Whether an import's state is one it ends in. */
const ended = (state) => ["succeeded", "failed", "cancelled"].includes(state.status);

const importState = async (service, storeId, id) =>
  (await fetch(`${service.url}/api/v1/stores/${storeId}/imports/${id}`, { headers: { Authorization: `Bearer ${service.key}` } })).json();

/** One import, from the first byte of the upload to `succeeded`, with the server's peak RSS sampled throughout. */
async function importFile(service, storeId, kind, file, lines) {
  let peak = rssMb(service.child.pid);
  const sampler = setInterval(() => {
    try {
      peak = Math.max(peak, rssMb(service.child.pid));
    } catch {}
  }, 100);
  const cpuBefore = { server: cpuSeconds(service.child.pid), postgres: postgresSeconds() };
  const started = performance.now();
  const id = await upload(service, storeId, kind, file);
  const received = performance.now();
  let state;
  for (;;) {
    state = await importState(service, storeId, id);
    if (ended(state)) break;
    await sleep(100);
  }
  const seconds = (performance.now() - started) / 1000;
  clearInterval(sampler);
  // Cores each side kept busy on average: what bounds the import (a Node process runs its JavaScript on one thread).
  const busy = { server: +((cpuSeconds(service.child.pid) - cpuBefore.server) / seconds).toFixed(2), postgres: +((postgresSeconds() - cpuBefore.postgres) / seconds).toFixed(2) };
  if (state.status !== "succeeded" || state.processed !== lines || state.failed !== 0) throw new Error(`import ended ${JSON.stringify(state)}`);
  return { lines, seconds: +seconds.toFixed(1), uploadSeconds: +((received - started) / 1000).toFixed(1), recordsPerSecond: Math.round(lines / seconds), peakRssMb: Math.round(peak), bytes: state.bytes, coresBusy: busy };
}

/** A CSV file of `count` rows made by `make`, written once. */
async function csvFile(name, count, make) {
  const csv = path.join(work, name);
  if (fs.existsSync(csv)) return csv;
  const rows = async function* () {
    let batch = [];
    for (let i = 0; i < count; i++) {
      batch.push(make(i).map((value) => (value === null ? "" : `"${String(value).replaceAll('"', '""')}"`)).join(","));
      if (batch.length === 5000) {
        yield `${batch.join("\n")}\n`;
        batch = [];
      }
    }
    if (batch.length) yield `${batch.join("\n")}\n`;
  };
  await pipeline(Readable.from(rows()), fs.createWriteStream(csv));
  return csv;
}

/** The stage and merge of each kind: what the database alone does to store the same rows in the service's tables. */
const DATABASE_ALONE = {
  orders: {
    stage: `seq bigint, external_id text, placed_at timestamptz, total_price numeric(14,2), currency text, financial_status text,
      customer_external_id text, phone text, first_name text, last_name text, email text, line_items jsonb, tags text[]`,
    row: (i) => {
      const o = order(i);
      const c = o.customer;
      return [i, o.external_id, o.placed_at, o.total_price, o.currency, o.financial_status, c.external_id, c.phone, c.first_name, c.last_name, c.email, JSON.stringify(o.line_items), `{${o.tags.join(",")}}`];
    },
    merge: [
      `insert into contacts (store_id, phone, first_name, last_name, email)
        select distinct on (phone) $1::bigint, phone, first_name, last_name, email from stage order by phone, seq desc
        on conflict (store_id, phone) do update set first_name = excluded.first_name, last_name = excluded.last_name, email = excluded.email`,
      `insert into customers (store_id, external_id, phone, first_name, last_name, email, contact_id)
        select distinct on (s.customer_external_id) $1::bigint, s.customer_external_id, s.phone, s.first_name, s.last_name, s.email, k.id
        from stage s join contacts k on k.store_id = $1 and k.phone = s.phone order by s.customer_external_id, s.seq desc
        on conflict (store_id, external_id) where deleted_at is null do update
        set phone = excluded.phone, first_name = excluded.first_name, last_name = excluded.last_name, email = excluded.email, contact_id = excluded.contact_id, updated_at = now()`,
      `insert into customer_contacts (customer_id, contact_id) select id, contact_id from customers where store_id = $1 and contact_id is not null on conflict do nothing`,
      `insert into orders (store_id, external_id, customer_id, placed_at, total_price, currency, financial_status, line_items, tags)
        select distinct on (s.external_id) $1::bigint, s.external_id, c.id, s.placed_at, s.total_price, s.currency, s.financial_status, s.line_items, s.tags
        from stage s join customers c on c.store_id = $1 and c.external_id = s.customer_external_id and c.deleted_at is null order by s.external_id, s.seq desc
        on conflict (store_id, external_id) do update set customer_id = excluded.customer_id, placed_at = excluded.placed_at, total_price = excluded.total_price,
          currency = excluded.currency, financial_status = excluded.financial_status, line_items = excluded.line_items, tags = excluded.tags, updated_at = now()`,
      `update customers c set orders_count = t.n, lifetime_value = t.v
        from (select customer_id, count(*) as n, (sum(total_price) * 100)::bigint as v from orders where store_id = $1 group by customer_id) t
        where c.id = t.customer_id`,
    ],
  },
  customers: {
    stage: "seq bigint, external_id text, phone text, first_name text, last_name text, email text, tags text[]",
    row: (i) => {
      const c = customer(i);
      return [i, c.external_id, c.phone, c.first_name, c.last_name, c.email, `{${c.tags.join(",")}}`];
    },
    merge: [
      `insert into contacts (store_id, phone, first_name, last_name, email, tags)
        select distinct on (phone) $1::bigint, phone, first_name, last_name, email, tags from stage order by phone, seq desc
        on conflict (store_id, phone) do update set first_name = excluded.first_name, last_name = excluded.last_name, email = excluded.email, tags = excluded.tags`,
      `insert into customers (store_id, external_id, phone, first_name, last_name, email, tags, contact_id)
        select distinct on (s.external_id) $1::bigint, s.external_id, s.phone, s.first_name, s.last_name, s.email, s.tags, k.id
        from stage s join contacts k on k.store_id = $1 and k.phone = s.phone order by s.external_id, s.seq desc
        on conflict (store_id, external_id) where deleted_at is null do update
        set phone = excluded.phone, first_name = excluded.first_name, last_name = excluded.last_name, email = excluded.email, tags = excluded.tags,
          contact_id = excluded.contact_id, updated_at = now()`,
      `insert into customer_contacts (customer_id, contact_id) select id, contact_id from customers where store_id = $1 and contact_id is not null on conflict do nothing`,
    ],
  },
};

/**
 * The database alone, the reference of each import: the same rows (phones already in E.164) by COPY into an
 * unlogged stage, then one set-based statement per table in one transaction, into a store of their own.
 */
async function databaseAlone(url, storeId, kind, count) {
  const spec = DATABASE_ALONE[kind];
  const csv = await csvFile(`${kind}.csv`, count, spec.row);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`drop table if exists stage; create unlogged table stage (${spec.stage})`);
    const started = performance.now();
    execFileSync("psql", [url, "-q", "-c", `\\copy stage from '${csv}' with (format csv)`], { stdio: ["ignore", "ignore", "inherit"] });
    const copied = performance.now();
    await client.query("begin");
    for (const statement of spec.merge) await client.query(statement, [storeId]);
    await client.query("commit");
    const seconds = (performance.now() - started) / 1000;
    const stored = (await client.query(`select count(*)::int as n from ${kind} where store_id = $1`, [storeId])).rows[0].n;
    if (stored !== count) throw new Error(`database alone stored ${stored} ${kind}`);
    await client.query("drop table stage");
    return { lines: count, seconds: +seconds.toFixed(1), copySeconds: +((copied - started) / 1000).toFixed(1), recordsPerSecond: Math.round(count / seconds) };
  } finally {
    await client.end();
  }
}

/** Waits (two minutes at most) until no autovacuum runs in the cluster: the CPU it takes is no scenario's own. */
async function untilVacuumsEnd(client) {
  for (let i = 0; i < 1200; i++) {
    const { rows } = await client.query("select count(*)::int as n from pg_stat_activity where backend_type = 'autovacuum worker'");
    if (rows[0].n === 0) return;
    await sleep(100);
  }
}

/** Another team's single order pushes, as fast as answered on 8 connections, by load.mjs in a process of its own. */
function neighbourPushes(service, neighbour, seconds, prefix) {
  return new Promise((resolve, reject) => {
    const spec = { url: service.url, key: neighbour.key, storeId: neighbour.storeId, kind: "order-new", connections: 8, seconds, prefix };
    const child = spawn(process.execPath, [path.join(here, "load.mjs"), JSON.stringify(spec)], { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout.on("data", (chunk) => (out += chunk));
    child.once("exit", (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`load.mjs exited ${code}`))));
  });
}

/**
 * Another team's pushes during an import, beside the same pushes alone, on one service (its rate limit off, as
 * the pushes are the measure): after a warm-up of 3 s (uncounted), the pushes alone, then the import uploaded and,
 * once it merges, the pushes again, and once it has ended, alone again; as with the bare route in run.mjs, the
 * pushes alone are the mean of the windows before and after (the first is the service's first load, the last
 * meets tables the import made larger). The import's own progress over its window beside its speed alone.
 */
async function pushesDuringImport(service, file, lines) {
  const neighbour = await service.otherTeam();
  await neighbourPushes(service, neighbour, 3, "warm");
  const before = await neighbourPushes(service, neighbour, LIVE_SECONDS, "alone");
  const storeId = await service.store();
  const started = performance.now();
  const id = await upload(service, storeId, "orders", file);
  const from = await importState(service, storeId, id);
  const windowStarted = performance.now();
  const during = await neighbourPushes(service, neighbour, LIVE_SECONDS, "during");
  const to = await importState(service, storeId, id);
  const windowSeconds = (performance.now() - windowStarted) / 1000;
  let state = to;
  while (!ended(state)) {
    await sleep(100);
    state = await importState(service, storeId, id);
  }
  if (state.status !== "succeeded" || state.processed !== lines) throw new Error(`import ended ${JSON.stringify(state)}`);
  const importWhole = Math.round(lines / ((performance.now() - started) / 1000));
  const after = await neighbourPushes(service, neighbour, LIVE_SECONDS, "after");
  const figures = (window) => ({ rps: Math.round(window.rps), p50: window.p50, p99: window.p99 });
  const mean = (key) => Math.round(((before[key] + after[key]) / 2) * 10) / 10;
  return {
    alone: { rps: Math.round((before.rps + after.rps) / 2), p50: mean("p50"), p99: mean("p99") },
    aloneBefore: figures(before),
    aloneAfter: figures(after),
    during: { ...figures(during), non2xx: during.non2xx },
    importDuring: Math.round((to.processed - from.processed) / windowSeconds),
    importWhole,
  };
}

/**
 * Two builds' imports side by side, for a change smaller than the machine's drift from one import to the next:
 * both services up at once, each on a fresh database of the same PostgreSQL, the same file uploaded to both at
 * once; when the first ends, each side's CPU per record (its server's, and its database's backends', from /proc).
 * The builds change seats every round. Prints each round and the medians of after / before; writes nothing.
 */
async function sideBySide([before, after], kind, lines, rounds) {
  const file = path.join(work, `${kind}-${lines}.ndjson.gz`);
  await writeFile(file, lines, kind === "orders" ? order : customer);
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  const backendSeconds = async (db) => {
    const { rows } = await client.query("select pid from pg_stat_activity where datname = $1", [db]);
    return rows.reduce((sum, row) => sum + cpuSeconds(row.pid), 0);
  };
  const ratios = { total: [], server: [], postgres: [] };
  try {
    for (let round = 0; round < rounds; round++) {
      await untilVacuumsEnd(client);
      const seats = (round % 2 ? [after, before] : [before, after]).map((checkout, seat) => ({ checkout, db: `bench_pair_${Date.now()}_${seat}` }));
      for (const side of seats) {
        await client.query(`create database ${side.db}`);
        const url = new URL(serverUrl);
        url.pathname = `/${side.db}`;
        side.service = await startService({ DATABASE_URL: url.toString() }, side.checkout);
        side.storeId = await side.service.store();
      }
      try {
        for (const side of seats) side.cpu = { server: cpuSeconds(side.service.child.pid), postgres: await backendSeconds(side.db) };
        await Promise.all(seats.map(async (side) => (side.id = await upload(side.service, side.storeId, kind, file))));
        // Until the first ends: each side's state then, read once.
        do {
          await sleep(200);
          for (const side of seats) side.state = await importState(side.service, side.storeId, side.id);
        } while (!seats.some((side) => ended(side.state)));
        for (const side of seats) {
          const { processed } = side.state;
          const server = (cpuSeconds(side.service.child.pid) - side.cpu.server) / processed;
          const postgres = ((await backendSeconds(side.db)) - side.cpu.postgres) / processed;
          side.perRecordUs = { server: server * 1e6, postgres: postgres * 1e6, total: (server + postgres) * 1e6 };
        }
      } finally {
        for (const side of seats) await stop(side.service.child);
        for (const side of seats) await client.query(`drop database if exists ${side.db} with (force)`);
      }
      const [b, a] = seats[0].checkout === before ? seats : [seats[1], seats[0]];
      for (const part of Object.keys(ratios)) ratios[part].push(a.perRecordUs[part] / b.perRecordUs[part]);
      const us = (side) => `${side.perRecordUs.total.toFixed(1)} µs (server ${side.perRecordUs.server.toFixed(1)}, PostgreSQL ${side.perRecordUs.postgres.toFixed(1)})`;
      console.log(`round ${round + 1}, ${seats[0].checkout === before ? "before" : "after"} seated first: CPU per record before ${us(b)}, after ${us(a)}; after / before ${(a.perRecordUs.total / b.perRecordUs.total).toFixed(3)}`);
    }
  } finally {
    await client.end();
  }
  const median = (list) => [...list].sort((x, y) => x - y)[Math.floor(list.length / 2)];
  console.log(`after / before, median of ${rounds} rounds: CPU per record ${median(ratios.total).toFixed(3)} (server ${median(ratios.server).toFixed(3)}, PostgreSQL ${median(ratios.postgres).toFixed(3)})`);
}

if (values.pair) {
  const checkouts = values.pair.split(",").map((checkout) => path.resolve(checkout));
  if (checkouts.length !== 2) throw new Error("--pair <checkout before>,<checkout after>");
  try {
    await sideBySide(checkouts, values.kind, Number(values.lines), Number(values.rounds));
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
  process.exit(0);
}

const machine = `${os.cpus().length} × ${os.cpus()[0]?.model.trim()}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
console.log(`Import benchmark on ${machine}: ${ORDERS.toLocaleString("en-US")} orders (${DISTINCT.toLocaleString("en-US")} customers), ${CUSTOMERS.toLocaleString("en-US")} customers; embedded: ${EMBEDDED.toLocaleString("en-US")} orders.`);
const ordersFile = path.join(work, "orders.ndjson.gz");
const customersFile = path.join(work, "customers.ndjson.gz");
const embeddedFile = path.join(work, "orders-embedded.ndjson.gz");
const liveFile = path.join(work, "orders-live.ndjson.gz");
await writeFile(ordersFile, ORDERS, order);
await writeFile(liveFile, LIVE, order);
await writeFile(customersFile, CUSTOMERS, customer);
await writeFile(embeddedFile, EMBEDDED, order);

const dbName = `bench_import_${Date.now()}`;
const adminClient = new pg.Client({ connectionString: serverUrl });
await adminClient.connect();
await adminClient.query(`create database ${dbName}`);
const benchUrl = new URL(serverUrl);
benchUrl.pathname = `/${dbName}`;
const results = {};
let referenceStores;
try {
  const service = await startService({ DATABASE_URL: benchUrl.toString() });
  try {
    results.orders = await importFile(service, await service.store(), "orders", ordersFile, ORDERS);
    console.log("orders", results.orders);
    results.customers = await importFile(service, await service.store(), "customers", customersFile, CUSTOMERS);
    console.log("customers", results.customers);
    // The references after the service's imports, as each import ran after the other: on the same tables, the
    // database's own upkeep (autovacuum, analyze) of the rows before it running meanwhile.
    referenceStores = { orders: await service.store(), customers: await service.store() };
  } finally {
    await stop(service.child);
  }
  results.ordersAlone = await databaseAlone(benchUrl.toString(), referenceStores.orders, "orders", ORDERS);
  console.log("orders, database alone", results.ordersAlone);
  results.customersAlone = await databaseAlone(benchUrl.toString(), referenceStores.customers, "customers", CUSTOMERS);
  console.log("customers, database alone", results.customersAlone);
  // The imports' database is done with: dropped, so that its upkeep (autovacuum of the rows just loaded) does not
  // run into the windows below; and each of them starts once the cluster's vacuums have ended.
  await adminClient.query(`drop database ${dbName} with (force)`);
  await untilVacuumsEnd(adminClient);
  await adminClient.query(`create database ${dbName}_live`);
  const liveUrl = new URL(serverUrl);
  liveUrl.pathname = `/${dbName}_live`;
  const live = await startService({ DATABASE_URL: liveUrl.toString(), RATE_LIMIT_REQUESTS: "0" });
  try {
    results.live = await pushesDuringImport(live, liveFile, LIVE);
    console.log("another team's pushes during an import", results.live);
  } finally {
    await stop(live.child);
  }
  await untilVacuumsEnd(adminClient);
  const dataDir = fs.mkdtempSync(path.join(work, "embedded-"));
  const embedded = await startService({ DATA_DIR: dataDir });
  try {
    results.embeddedOrders = await importFile(embedded, await embedded.store(), "orders", embeddedFile, EMBEDDED);
    console.log("embedded orders", results.embeddedOrders);
  } finally {
    await stop(embedded.child);
  }
} finally {
  await adminClient.query(`drop database if exists ${dbName} with (force)`);
  await adminClient.query(`drop database if exists ${dbName}_live with (force)`);
  await adminClient.end();
  fs.rmSync(work, { recursive: true, force: true });
}

const ordersRatio = results.orders.recordsPerSecond / results.ordersAlone.recordsPerSecond;
const customersRatio = results.customers.recordsPerSecond / results.customersAlone.recordsPerSecond;
const cpuPerRecord = (r) => ((r.coresBusy.server + r.coresBusy.postgres) / r.recordsPerSecond) * 1000;
/**
 * The CPU per imported order in the database alone's time per order of the same run: a measure of the import path
 * that holds on a machine slower or faster than another (the reference runs on one backend, so its time is about
 * its CPU). The path before this bench's targets were set spent 0.139 ms an order where the reference took
 * 0.0217 ms (21.7 s for 1,000,000 orders), 6.4 times; the target, half of its CPU, is half of that ratio.
 */
const BEFORE_CPU_RATIO = 0.139 / 0.0217;
const referenceMsPerOrder = 1000 / results.ordersAlone.recordsPerSecond;
const cpuInReferenceTime = cpuPerRecord(results.orders) / referenceMsPerOrder;
const { live } = results;
const targets = [
  ["orders ≥ 0.6 × the database alone", ordersRatio >= 0.6, `${ordersRatio.toFixed(2)} ×`],
  ["customers ≥ 0.6 × the database alone", customersRatio >= 0.6, `${customersRatio.toFixed(2)} ×`],
  ["server RSS < 250 MB throughout", Math.max(results.orders.peakRssMb, results.customers.peakRssMb) < 250, `${Math.max(results.orders.peakRssMb, results.customers.peakRssMb)} MB peak`],
  ["CPU per imported order ≤ 0.07 ms (server + PostgreSQL)", cpuPerRecord(results.orders) <= 0.07, `${cpuPerRecord(results.orders).toFixed(3)} ms`],
  [
    `the same in the database alone's time per order of this run ≤ ${(BEFORE_CPU_RATIO / 2).toFixed(1)} × (half of ${BEFORE_CPU_RATIO.toFixed(1)} ×: 0.139 ms against 0.0217 ms, before)`,
    cpuInReferenceTime <= BEFORE_CPU_RATIO / 2,
    `${cpuInReferenceTime.toFixed(2)} × (${referenceMsPerOrder.toFixed(4)} ms an order alone)`,
  ],
  ["embedded import ≥ 15,000 orders/s", results.embeddedOrders.recordsPerSecond >= 15_000, `${results.embeddedOrders.recordsPerSecond.toLocaleString("en-US")} orders/s`],
  ["another team's pushes during an import ≥ 0.8 × alone", live.during.rps >= 0.8 * live.alone.rps, `${(live.during.rps / live.alone.rps).toFixed(2)} ×`],
  ["their p99 during an import ≤ 2 × alone", live.during.p99 <= 2 * live.alone.p99, `${(live.during.p99 / live.alone.p99).toFixed(1)} ×`],
  ["the import under that load ≥ 0.25 × its speed alone", live.importDuring >= 0.25 * results.orders.recordsPerSecond, `${(live.importDuring / results.orders.recordsPerSecond).toFixed(2)} ×`],
];
const row = (name, r) =>
  `| ${name} | ${r.lines.toLocaleString("en-US")} | ${r.seconds} | ${r.uploadSeconds ?? "–"} | ${r.recordsPerSecond.toLocaleString("en-US")} | ${r.peakRssMb ?? "–"} | ${r.coresBusy ? `${r.coresBusy.server} / ${r.coresBusy.postgres}` : "–"} |`;
const report = `# Import benchmark

Made by \`pnpm bench\` (\`bench/import.mjs\`) on ${new Date().toISOString().slice(0, 10)}: ${machine}; PostgreSQL on the same machine. Each import is timed from the first byte of its gzipped upload to \`succeeded\`, with the service's default settings; RSS is the server process's, sampled every 100 ms.

| import | lines | seconds | of which upload | records/s | server peak RSS MB | cores busy: server / PostgreSQL |
|---|---|---|---|---|---|---|
${row("orders with embedded customers (PostgreSQL)", results.orders)}
${row("reference: the database alone, the same orders (COPY to a stage, then one statement per table)", results.ordersAlone)}
${row("customers alone (PostgreSQL)", results.customers)}
${row("reference: the database alone, the same customers", results.customersAlone)}
${row("orders with embedded customers (embedded database)", results.embeddedOrders)}

CPU per imported record (server + PostgreSQL, ms): orders ${cpuPerRecord(results.orders).toFixed(3)}, customers ${cpuPerRecord(results.customers).toFixed(3)}, embedded orders ${cpuPerRecord(results.embeddedOrders).toFixed(3)}.

Another team's single order pushes (8 connections, as fast as answered, ${LIVE_SECONDS} s, rate limit off, after 3 s uncounted) alone, then while an import of ${LIVE.toLocaleString("en-US")} orders merges on the same service, then alone again once it has ended; the targets compare the pushes during the import with the mean of the two windows alone:

| pushes | req/s | p50 ms | p99 ms |
|---|---|---|---|
| alone, before the import | ${live.aloneBefore.rps.toLocaleString("en-US")} | ${live.aloneBefore.p50} | ${live.aloneBefore.p99} |
| alone, after it | ${live.aloneAfter.rps.toLocaleString("en-US")} | ${live.aloneAfter.p50} | ${live.aloneAfter.p99} |
| alone, the mean | ${live.alone.rps.toLocaleString("en-US")} | ${live.alone.p50} | ${live.alone.p99} |
| during the import | ${live.during.rps.toLocaleString("en-US")} | ${live.during.p50} | ${live.during.p99} |

The import meanwhile: ${live.importDuring.toLocaleString("en-US")} orders/s under that load (${live.importWhole.toLocaleString("en-US")} orders/s over its whole run; alone, above: ${results.orders.recordsPerSecond.toLocaleString("en-US")}).

| target | met | measured |
|---|---|---|
${targets.map(([name, met, measured]) => `| ${name} | ${met ? "yes" : "no"} | ${measured} |`).join("\n")}
`;
fs.writeFileSync(path.join(repo, "docs/imports-bench.md"), report);
fs.writeFileSync(path.join(repo, "docs/imports-bench.json"), `${JSON.stringify({ date: new Date().toISOString(), machine, results }, null, 2)}\n`);
console.log(report);
// As run.mjs: a missed target fails the command, after both have written what they measured.
process.exitCode = targets.every(([, met]) => met) ? 0 : 1;
