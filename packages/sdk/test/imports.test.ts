import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CommerceIngestClient, ConflictError, type Import } from "../src/index.js";
import { startService } from "./server.js";

let service: Awaited<ReturnType<typeof startService>>;
let tenant: { storeId: number; apiKey: string };
let client: CommerceIngestClient;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "sdk-imports-"));
const cli = path.join(import.meta.dirname, "../dist/cli.js");

beforeAll(async () => {
  service = await startService();
  tenant = await service.tenant();
  client = new CommerceIngestClient({ apiKey: tenant.apiKey, baseUrl: service.url });
});
afterAll(async () => {
  await service?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

const order = (i: number) => ({ external_id: `o-${i}`, placed_at: "2025-05-01T10:00:00Z", total_price: 10 + i, customer: { external_id: `c-${i % 50}`, phone: `+1415555${1000 + (i % 50)}` } });

describe("imports through the SDK", () => {
  it("stream records from an async generator, follow the import to its end, and read its refused lines", async () => {
    function* history() {
      for (let i = 0; i < 2500; i++) yield i === 7 ? { ...order(i), external_id: "bad", placed_at: "yesterday" } : order(i);
    }
    const uploads: number[] = [];
    const handle = await client.store(tenant.storeId).imports.create({ kind: "orders", records: history(), onUpload: ({ records }) => uploads.push(records) });
    expect(handle.data).toMatchObject({ kind: "orders", lines: 2500, store_id: tenant.storeId });
    expect(uploads.at(-1)).toBe(2500);
    const seen: Import[] = [];
    const done = await handle.wait({ intervalMs: 50, onProgress: (progress) => seen.push(progress) });
    expect(done).toMatchObject({ status: "succeeded", processed: 2500, created: 2499, updated: 0, failed: 1 });
    expect(seen.at(-1)?.status).toBe("succeeded");
    const refused = [];
    for await (const line of handle.errors()) refused.push(line);
    expect(refused).toEqual([{ line: 8, external_id: "bad", status: 422, code: "validation_failed", error: "Invalid request body", details: [{ path: "placed_at", message: expect.any(String) }] }]);
    const stored = await client.orders.retrieve(tenant.storeId, "o-2499");
    expect(stored.data).toMatchObject({ total_price: "2509.00", customer_external_id: "c-49" });
    const { data: list } = await client.imports.list(tenant.storeId);
    expect(list.data[0]).toMatchObject({ id: handle.id, status: "succeeded" });
    await expect(handle.cancel()).rejects.toBeInstanceOf(ConflictError);
  });

  it("import a gzipped file from the command line, with a summary, exiting 1 when lines were refused", async () => {
    const file = path.join(dir, "customers.ndjson.gz");
    const lines = [...Array.from({ length: 300 }, (_, i) => JSON.stringify({ external_id: `cli-${i}`, phone: `+1415556${String(1000 + i)}` })), '{"external_id":"cli-bad","phone":"12"}'];
    fs.writeFileSync(file, gzipSync(`${lines.join("\n")}\n`));
    const env = { ...process.env, COMMERCE_INGEST_API_KEY: tenant.apiKey, COMMERCE_INGEST_BASE_URL: service.url };
    const errorsFile = path.join(dir, "errors.ndjson");
    const run = promisify(execFile)(process.execPath, [cli, "import", "--store", String(tenant.storeId), "--kind", "customers", "--errors", errorsFile, file], { env });
    const failure = (await run.then(() => undefined, (error: unknown) => error)) as { code: number; stdout: string; stderr: string };
    expect(failure.code).toBe(1);
    expect(failure.stdout).toMatch(/^import \d+ succeeded: 301 lines, 300 created, 0 updated, 1 failed in /);
    expect(failure.stderr).toContain("line 301 (cli-bad): Invalid request body: phone");
    expect(fs.readFileSync(errorsFile, "utf8").trim().split("\n").map((line) => JSON.parse(line).line)).toEqual([301]);
    const stored = await client.customers.retrieve(tenant.storeId, "cli-299");
    expect(stored.data.phone).toBe("+14155561299");
  });

  it("import a plain file from the command line, exiting 0 when every line was stored", async () => {
    const file = path.join(dir, "orders.ndjson");
    fs.writeFileSync(file, `${Array.from({ length: 40 }, (_, i) => JSON.stringify(order(5000 + i))).join("\n")}\n`);
    const env = { ...process.env, COMMERCE_INGEST_API_KEY: tenant.apiKey, COMMERCE_INGEST_BASE_URL: service.url };
    const { stdout } = await promisify(execFile)(process.execPath, [cli, "import", "--store", String(tenant.storeId), "--kind", "orders", file], { env });
    expect(stdout).toMatch(/^import \d+ succeeded: 40 lines, 40 created, 0 updated, 0 failed/);
    const usage = await promisify(execFile)(process.execPath, [cli, "import", "--kind", "nope", file], { env }).catch((error: { code: number; stderr: string }) => error);
    expect(usage).toMatchObject({ code: 2, stderr: expect.stringContaining("--store must be a store id") });
    const unknownOption = await promisify(execFile)(process.execPath, [cli, "import", "--stor", "1", file], { env }).catch((error: { code: number; stderr: string }) => error);
    expect(unknownOption).toMatchObject({ code: 2, stderr: expect.stringContaining("Unknown option '--stor'") });
  });

  it("exit 3 from the command line when nothing was imported: a wrong key, a file that is not there", async () => {
    const file = path.join(dir, "one.ndjson");
    fs.writeFileSync(file, `${JSON.stringify(order(7000))}\n`);
    const args = [cli, "import", "--store", String(tenant.storeId), "--kind", "orders"];
    const wrongKey = await promisify(execFile)(process.execPath, [...args, file], { env: { ...process.env, COMMERCE_INGEST_API_KEY: "x".repeat(24), COMMERCE_INGEST_BASE_URL: service.url } }).catch((error: { code: number; stderr: string }) => error);
    expect(wrongKey).toMatchObject({ code: 3, stderr: expect.stringContaining("Invalid API key") });
    const missing = await promisify(execFile)(process.execPath, [...args, path.join(dir, "absent.ndjson")], { env: { ...process.env, COMMERCE_INGEST_API_KEY: tenant.apiKey, COMMERCE_INGEST_BASE_URL: service.url } }).catch((error: { code: number; stderr: string }) => error);
    expect(missing).toMatchObject({ code: 3, stderr: expect.stringContaining("ENOENT") });
  });
});
