import { gzipSync } from "node:zlib";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { operator, startProcess, stopAll, tempDir, type Proc } from "../test/processes.js";
import { createCluster, faultTestsUnavailable, freePort, type Cluster } from "./cluster.js";

/**
 * An import through a killed server and a PostgreSQL restart: it resumes where
 * its last committed chunk ended, and its counts and rows are exactly those of
 * the file, nothing applied twice, nothing skipped.
 */
const ADMIN = "faults-admin-token-0123456789";
const LINES = 60_000;
/** Customers keyed 0..DISTINCT-1: the later lines update the earlier ones' records. */
const DISTINCT = 45_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const unavailable = faultTestsUnavailable(Boolean(process.env.CI));

describe.runIf(!unavailable)("an import under faults", () => {
  let cluster: Cluster;
  const procs: Proc[] = [];
  let env: Record<string, string>;
  const file = gzipSync(
    Array.from({ length: LINES }, (_, i) => JSON.stringify({ external_id: `k-${i % DISTINCT}`, phone: `+1202${String(5_000_000 + (i % DISTINCT))}`, first_name: `line ${i + 1}` })).join("\n"),
  );

  beforeAll(async () => {
    cluster = await createCluster(await freePort());
    // A lease of 2 s: a chunk the killed server held is taken over soon after.
    env = { DATABASE_URL: cluster.url, ADMIN_TOKEN: ADMIN, SEED_DEMO: "false", DATA_DIR: tempDir(), IMPORT_LEASE_SECONDS: "2", WORKER_POLL_MS: "100", IMPORT_CONCURRENCY: "1" };
  });
  afterAll(async () => {
    await stopAll(procs);
    await cluster?.destroy();
  });

  async function tenant(url: string) {
    const team = await operator(url, ADMIN, "POST", "/admin/v1/teams", { name: "Faults" });
    const store = await operator(url, ADMIN, "POST", "/admin/v1/stores", { team_id: team.id, name: "Shop", country: "US" });
    const key = await operator(url, ADMIN, "POST", "/admin/v1/keys", { team_id: team.id, name: "import" });
    return { storeId: store.id, key: key.key };
  }

  async function upload(url: string, shop: { storeId: number; key: string }) {
    const res = await fetch(`${url}/api/v1/stores/${shop.storeId}/imports?kind=customers`, {
      method: "POST",
      headers: { Authorization: `Bearer ${shop.key}`, "Content-Type": "application/x-ndjson", "Content-Encoding": "gzip" },
      body: file,
    });
    expect(res.status).toBe(202);
    return ((await res.json()) as { id: number }).id;
  }

  const state = async (url: string, shop: { storeId: number; key: string }, id: number) => {
    const res = await fetch(`${url}/api/v1/stores/${shop.storeId}/imports/${id}`, { headers: { Authorization: `Bearer ${shop.key}` } }).catch(() => undefined);
    return res?.ok ? ((await res.json()) as { status: string; processed: number; created: number; updated: number; failed: number }) : undefined;
  };

  async function until(test: () => Promise<boolean>, what: string, ms = 120_000) {
    const end = Date.now() + ms;
    while (Date.now() < end) {
      if (await test()) return;
      await sleep(50);
    }
    throw new Error(`timed out waiting for ${what}`);
  }

  /** One query on the cluster, on a connection of its own. */
  async function query<Row extends object>(text: string, values: unknown[]): Promise<Row[]> {
    const db = new pg.Client({ connectionString: cluster.url });
    await db.connect();
    try {
      return (await db.query<Row>(text, values)).rows;
    } finally {
      await db.end();
    }
  }

  const rowsOf = async (storeId: number) => Number((await query<{ count: string }>("select count(*) from customers where store_id = $1", [storeId]))[0]?.count);

  /** The rows the import left: one per customer key, each with its last line's name. */
  async function checkRows(storeId: number) {
    const rows = await query<{ rows: string; distinct: string; last: string }>(
      `select count(*) as rows, count(distinct external_id) as distinct,
         count(*) filter (where first_name = 'line ' || (regexp_replace(external_id, '^k-', '')::int + ${DISTINCT} * ((${LINES} - 1 - regexp_replace(external_id, '^k-', '')::int) / ${DISTINCT}) + 1)) as last
       from customers where store_id = $1`,
      [storeId],
    );
    expect(rows[0]).toEqual({ rows: String(DISTINCT), distinct: String(DISTINCT), last: String(DISTINCT) });
  }

  /** A server on the cluster, a store, and an import of the file under way (part of it merged). */
  async function importUnderWay() {
    const server = await startProcess("main.js", { ...env, PORT: String(await freePort()) });
    procs.push(server);
    const url = server.url ?? "";
    const shop = await tenant(url);
    const id = await upload(url, shop);
    await until(async () => ((await state(url, shop, id))?.processed ?? 0) > 0, "the import to start");
    return { server, url, shop, id };
  }


  it("finishes with exact counts after its server is SIGKILLed mid-way", { timeout: 240_000 }, async () => {
    const { server, shop, id } = await importUnderWay();
    server.child.kill("SIGKILL");
    await server.exited;
    // Killed mid-way: part of the file merged, not all.
    expect((await rowsOf(shop.storeId)) < DISTINCT).toBe(true);
    const after = await startProcess("main.js", { ...env, PORT: String(await freePort()) });
    procs.push(after);
    const again = after.url ?? "";
    await until(async () => (await state(again, shop, id))?.status === "succeeded", "the import to succeed");
    expect(await state(again, shop, id)).toMatchObject({ status: "succeeded", processed: LINES, created: DISTINCT, updated: LINES - DISTINCT, failed: 0 });
    await checkRows(shop.storeId);
  });

  it("is merged by a worker process that received nothing of it, beside the server that took the upload, with exact counts", { timeout: 240_000 }, async () => {
    // The server that takes the upload merges no imports (as a web tier beside workers would run): which process
    // merges which chunk is otherwise the machine's business, and the worker's part could be none.
    const server = await startProcess("main.js", { ...env, PORT: String(await freePort()), IMPORT_CONCURRENCY: "0" });
    procs.push(server);
    const worker = await startProcess("worker.js", { ...env, LOG_LEVEL: "debug" });
    procs.push(worker);
    const url = server.url ?? "";
    const shop = await tenant(url);
    const id = await upload(url, shop);
    await until(async () => (await state(url, shop, id))?.status === "succeeded", "the import to succeed");
    expect(await state(url, shop, id)).toMatchObject({ status: "succeeded", processed: LINES, created: DISTINCT, updated: LINES - DISTINCT, failed: 0 });
    await checkRows(shop.storeId);
    // The worker, which received nothing, merged the file.
    expect(worker.output()).toMatch(new RegExp(`"importId":${id},"chunk":\\d+,"outcome":"merged"`));
    worker.child.kill("SIGTERM");
    await worker.exited;
  });

  it("finishes with exact counts through a PostgreSQL restart", { timeout: 240_000 }, async () => {
    const { url, shop, id } = await importUnderWay();
    await cluster.stop("immediate");
    await cluster.start();
    // Stopped mid-way: part of the file merged, not all.
    expect((await rowsOf(shop.storeId)) < DISTINCT).toBe(true);
    await cluster.stop("immediate");
    await sleep(1000);
    await cluster.start();
    await until(async () => (await state(url, shop, id))?.status === "succeeded", "the import to succeed");
    expect(await state(url, shop, id)).toMatchObject({ status: "succeeded", processed: LINES, created: DISTINCT, updated: LINES - DISTINCT, failed: 0 });
    await checkRows(shop.storeId);
  });
});
