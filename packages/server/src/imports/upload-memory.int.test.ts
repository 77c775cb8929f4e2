import { LIMITS } from "@commerce-ingest/shared";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createTestDatabase, testDb } from "../../test/helpers.js";
import { operator, startProcess, stopAll, tempDir, type Proc, PROCESS_TEST_TIMEOUT_MS } from "../../test/processes.js";
import { blankLines, longLines, MiB, peakMemoryOf, streamUpload, uploadMemoryBound, type Shop } from "../../test/uploads.js";

// Each test starts processes: on a busy machine that takes longer (see PROCESS_START_TIMEOUT_MS).
vi.setConfig({ testTimeout: PROCESS_TEST_TIMEOUT_MS, hookTimeout: PROCESS_TEST_TIMEOUT_MS });

/**
 * Hostile files against the built server with its default settings, its
 * memory read from the kernel (the peak resident set, `VmHWM`): whatever an
 * upload holds, the process stays within the bound docs/operations.md gives.
 */
const ADMIN = "upload-memory-admin-token-0123456789";
const BOUND = uploadMemoryBound();

const running: Proc[] = [];
let database: Awaited<ReturnType<typeof createTestDatabase>> | undefined;
let env: Record<string, string>;
let url: string;
let shop: Shop;
let started: number;

const peakOf = (proc: Proc) => peakMemoryOf(proc.child.pid);

async function startServer() {
  const proc = await startProcess("main.js", env);
  running.push(proc);
  url = proc.url ?? "";
  if (shop) shop.url = url;
  return proc;
}

beforeAll(async () => {
  database = testDb === "postgres" ? await createTestDatabase() : undefined;
  env = { ADMIN_TOKEN: ADMIN, SEED_DEMO: "false", DATA_DIR: tempDir(), IMPORT_UPLOAD_STALE_SECONDS: "3", ...(database?.url ? { DATABASE_URL: database.url } : {}) };
  await startServer();
  const team = await operator(url, ADMIN, "POST", "/admin/v1/teams", { name: "Hostile" });
  const store = await operator(url, ADMIN, "POST", "/admin/v1/stores", { team_id: team.id, name: "Shop", country: "US" });
  const key = await operator(url, ADMIN, "POST", "/admin/v1/keys", { team_id: team.id, name: "uploads" });
  shop = { url, storeId: store.id, key: key.key };
  started = peakOf(running[0] as Proc);
});
afterAll(async () => {
  await stopAll(running);
  await database?.drop();
});

async function importsOf() {
  const res = await fetch(`${url}/api/v1/stores/${shop.storeId}/imports`, { headers: { Authorization: `Bearer ${shop.key}` } });
  return ((await res.json()) as { data: Array<Record<string, unknown>> }).data;
}

describe("hostile uploads against the built server", () => {
  it("a file of blank lines, gzipped or not, is its one record; 1,100 lines of 1 MB are 413; memory stays bounded", async () => {
    const gzipped = await streamUpload(shop, "orders", blankLines(300), { gzip: true });
    expect(gzipped.status).toBe(202);
    expect(gzipped.body).toMatchObject({ lines: 1 });
    const plain = await streamUpload(shop, "orders", blankLines(200));
    expect(plain.status).toBe(202);
    expect(plain.body).toMatchObject({ lines: 1 });
    const large = await streamUpload(shop, "orders", longLines(1100, 1_000_000), { gzip: true });
    expect(large.status).toBe(413);
    expect(large.body).toMatchObject({ code: "import_too_large" });
    await expect.poll(async () => (await importsOf()).map((row) => row.status)).toEqual(["failed", "succeeded", "succeeded"]);
    expect((await importsOf())[0]).toMatchObject({ error_code: "import_too_large", processed: 0 });
    expect(peakOf(running[0] as Proc) - started).toBeLessThan(BOUND);
  });

  it("eight uploads of lines just under the limit at once: each answered, the server up, memory bounded", async () => {
    const answers = await Promise.all(Array.from({ length: 8 }, () => streamUpload(shop, "orders", longLines(60, MiB - 64), { gzip: true })));
    for (const { status } of answers) expect([202, 413, 503]).toContain(status);
    // Past the four a process takes at once, the rest were told to come back.
    expect(answers.filter(({ status }) => status === 503).length).toBeGreaterThan(0);
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    await expect.poll(async () => (await importsOf()).filter((row) => row.status === "queued" || row.status === "running").length, { timeout: 120_000 }).toBe(0);
    expect(peakOf(running[0] as Proc) - started).toBeLessThan(BOUND);
  });

  it("an upload whose server is killed mid-way ends failed, upload_interrupted, once a server runs again", async () => {
    const before = (await importsOf()).length;
    const proc = running[0] as Proc;
    const storedChunks = async () => {
      const res = await fetch(`${url}/metrics`, { headers: { Authorization: `Bearer ${ADMIN}` } });
      return Number(/^import_upload_chunks_total (\d+)/m.exec(await res.text())?.[1] ?? 0);
    };
    const chunksBefore = await storedChunks();
    // Two chunks' worth of lines, then nothing more: the upload stays open, receiving.
    const cut = streamUpload(shop, "orders", longLines(4 * LIMITS.importChunkLines, 400), { stopAfter: 2 * LIMITS.importChunkLines + LIMITS.importChunkLines / 2 });
    await expect.poll(storedChunks).toBe(chunksBefore + 2);
    expect((await importsOf()).length).toBe(before);
    proc.child.kill("SIGKILL");
    await proc.exited;
    expect((await cut).status).toBe(0);
    await startServer();
    await expect.poll(async () => (await importsOf()).length).toBe(before + 1);
    expect((await importsOf())[0]).toMatchObject({ status: "failed", error_code: "upload_interrupted", processed: 0 });
  });
});
