/**
 * Which files of `packages/server/src` an order push and an import's chunk
 * run, read from V8's own call counts (not from a reading of the code).
 *
 *   pnpm bench:path [--functions]
 *
 * The service runs in this process on PostgreSQL (a database made for the run
 * on `--database`, default postgres://postgres@127.0.0.1:5432), with no worker
 * and no background import runner, so that nothing but the call is counted.
 * A file counts once a function of it ran; a file whose only code that ran is
 * data read at load time does not. `--functions` names the functions.
 */
import { randomBytes } from "node:crypto";
import { Session } from "node:inspector/promises";
import { gzipSync } from "node:zlib";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import pg from "pg";
import { openDatabase } from "../src/db/index.js";
import { inTransaction } from "../src/db/sql.js";
import type { Db } from "../src/db/types.js";
import { parseEnv } from "../src/env.js";
import { createLogger } from "../src/logger.js";
import { startServer } from "../src/server.js";
import * as tenants from "../src/tenancy/tenant.service.js";
import { startImportRunner } from "../src/imports/runner.js";
import { LiveTraffic } from "../src/traffic.js";

const src = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../src") + path.sep;
const { values: options } = parseArgs({
  options: { database: { type: "string", default: "postgres://postgres@127.0.0.1:5432" }, functions: { type: "boolean", default: false } },
});
const base = options.database;
const dbName = `path_${process.pid}`;
const admin = new pg.Client({ connectionString: `${base}/postgres` });
await admin.connect();
await admin.query(`create database ${dbName}`);

const session = new Session();
session.connect();
await session.post("Profiler.enable");
await session.post("Profiler.startPreciseCoverage", { callCount: true, detailed: false });

async function filesRun(work: () => Promise<void>): Promise<string[]> {
  await session.post("Profiler.takePreciseCoverage"); // resets the counts
  await work();
  const { result } = await session.post("Profiler.takePreciseCoverage");
  const files = new Set<string>();
  for (const script of result) {
    if (!script.url.startsWith("file:")) continue;
    const file = fileURLToPath(script.url);
    if (!file.startsWith(src) || file.includes(".test.")) continue;
    // A function starting at 0 is the module itself (its load); any other that ran was entered.
    const ran = script.functions.filter((fn) => (fn.ranges[0]?.startOffset ?? 0) > 0 && (fn.ranges[0]?.count ?? 0) > 0);
    if (ran.length > 0) files.add(options.functions ? `${file.slice(src.length)}: ${ran.map((fn) => fn.functionName || "(anonymous)").join(", ")}` : file.slice(src.length));
  }
  return [...files].sort();
}

const env = parseEnv({
  PORT: "0",
  HOST: "127.0.0.1",
  DATABASE_URL: `${base}/${dbName}`,
  ADMIN_TOKEN: randomBytes(24).toString("hex"),
  SEED_DEMO: "false",
  LOG_LEVEL: "error",
  RUN_WORKER: "false",
  IMPORT_CONCURRENCY: "0",
  RATE_LIMIT_REQUESTS: "0",
});
const server = await startServer(env, createLogger("error", "json"), () => undefined);
let code = 0;
let closed = false;
try {
  const db = server.database.db;
  const { storeId, apiKey } = await inTransaction(db, async (trx) => {
    const team = await tenants.createTeam(trx, "Path team");
    const store = await tenants.createStore(trx, { team_id: team.id, name: "Path store", country: "US" });
    const key = await tenants.createApiKey(trx, { team_id: team.id, name: "path" });
    return { storeId: store.id, apiKey: key.key };
  });
  const order = (n: number) => ({
    external_id: `o-${n}`,
    placed_at: "2026-11-01T10:00:00Z",
    total_price: 59.9,
    currency: "USD",
    customer: { external_id: `c-${n}`, phone: `+1415555${String(1000 + n).slice(-4)}`, first_name: "Ada" },
    line_items: [{ sku: `SKU-${n}`, title: "Tea", quantity: 1, price: 59.9 }],
  });
  const push = async (n: number) => {
    const response = await fetch(`${server.url}/api/v1/stores/${storeId}/orders`, {
      method: "POST",
      headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
      body: JSON.stringify(order(n)),
    });
    if (response.status !== 201) throw new Error(`push ${n}: ${response.status} ${await response.text()}`);
  };
  for (let n = 0; n < 20; n++) await push(n); // warm: key cached, statements prepared
  // Three pushes, and the files each of them entered: a timer of the server's own (the request log's flush, every
  // 250 ms) that fires during one push is not that push's.
  const runs = [await filesRun(() => push(100)), await filesRun(() => push(101)), await filesRun(() => push(102))];
  const pushFiles = (runs[0] ?? []).filter((file) => runs.every((run) => run.includes(file)));

  // An import: uploaded with no runner in this process, then one chunk merged by a runner started here.
  const lines = Array.from({ length: 500 }, (_, i) => JSON.stringify(order(1000 + i))).join("\n");
  const upload = async (url: string) => {
    const response = await fetch(`${url}/api/v1/stores/${storeId}/imports?kind=orders`, {
      method: "POST",
      headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/x-ndjson", "content-encoding": "gzip" },
      body: gzipSync(lines),
    });
    if (response.status !== 202) throw new Error(`import: ${response.status} ${await response.text()}`);
    return ((await response.json()) as { id: number | string }).id;
  };
  // Read from the database, not over HTTP, so that only the runner's work is counted.
  const waitDone = async (db: Db, id: number | string) => {
    for (;;) {
      const row = await db.selectFrom("imports").select("status").where("id", "=", Number(id)).executeTakeFirstOrThrow();
      if (row.status !== "queued" && row.status !== "running") return row.status;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  const quiet = createLogger("error", "json");
  const runImport = async (db: Db, id: number | string) => {
    const runner = startImportRunner({ db, logger: quiet, live: new LiveTraffic() }, { ...env.imports.runner, concurrency: 1 });
    try {
      const status = await waitDone(db, id);
      if (status !== "succeeded") throw new Error(`import ${id}: ${status}`);
    } finally {
      await runner.stop();
    }
  };
  const first = await upload(server.url);
  // The server's own timers (the request log's flush, its upkeep) are not the chunk's: it stops, and a database
  // handle of its own serves the runner.
  await server.close();
  closed = true;
  const database = await openDatabase({ kind: "postgres", url: env.databaseUrl ?? "", poolSize: 4, timeouts: env.databaseTimeouts });
  let chunkFiles: string[];
  try {
    await runImport(database.db, first); // warm
    // The next file, uploaded once the first is merged, so that the runner's claim finds it alone.
    const again = await startServer(env, quiet, () => undefined);
    const second = await upload(again.url).finally(() => again.close());
    chunkFiles = await filesRun(() => runImport(database.db, second));
  } finally {
    await database.close();
  }

  const print = (title: string, files: string[]) => {
    console.log(`${title}: ${files.length} files of packages/server/src`);
    for (const file of files) console.log(`  ${file}`);
  };
  print("An order push", pushFiles);
  print("An import of one chunk (the runner's claim, check, merge and counts)", chunkFiles);
} catch (error) {
  console.error(error);
  code = 1;
} finally {
  if (!closed) await server.close();
  session.disconnect();
  await admin.query(`drop database ${dbName} with (force)`);
  await admin.end();
}
process.exit(code);
