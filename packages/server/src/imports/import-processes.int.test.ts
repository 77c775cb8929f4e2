import { gzipSync } from "node:zlib";
import { afterAll, describe, expect, it, vi } from "vitest";
import { testDb } from "../../test/helpers.js";
import { operator, startProcess, stopAll, tempDir, type Proc, PROCESS_TEST_TIMEOUT_MS } from "../../test/processes.js";

// Each test starts processes: on a busy machine that takes longer (see PROCESS_START_TIMEOUT_MS).
vi.setConfig({ testTimeout: PROCESS_TEST_TIMEOUT_MS, hookTimeout: PROCESS_TEST_TIMEOUT_MS });

/**
 * An import on the embedded database through a SIGKILL of its server: the
 * next server on the same data directory resumes it from its last merged
 * chunk, with exact counts (PostgreSQL's own crash and restart are in the
 * fault suite).
 */
const ADMIN = "import-admin-token-0123456789";
const LINES = 12_000;
const DISTINCT = 9_000;
const running: Proc[] = [];
afterAll(() => stopAll(running));

describe.runIf(testDb === "embedded")("an import on the embedded database", () => {
  it("finishes with exact counts after its server is SIGKILLed mid-way", async () => {
    const env = { DATA_DIR: tempDir(), ADMIN_TOKEN: ADMIN, SEED_DEMO: "false", IMPORT_LEASE_SECONDS: "2", WORKER_POLL_MS: "100" };
    const first = await startProcess("main.js", env);
    running.push(first);
    const url = first.url ?? "";
    const team = await operator(url, ADMIN, "POST", "/admin/v1/teams", { name: "Embedded" });
    const store = await operator(url, ADMIN, "POST", "/admin/v1/stores", { team_id: team.id, name: "Shop", country: "US" });
    const key = String((await operator(url, ADMIN, "POST", "/admin/v1/keys", { team_id: team.id, name: "import" })).key);
    const file = gzipSync(Array.from({ length: LINES }, (_, i) => JSON.stringify({ external_id: `k-${i % DISTINCT}`, phone: `+1202${String(5_000_000 + (i % DISTINCT))}`, first_name: `line ${i + 1}` })).join("\n"));
    const get = async (base: string, path: string) => {
      const res = await fetch(`${base}/api/v1/stores/${String(store.id)}${path}`, { headers: { Authorization: `Bearer ${key}`, Connection: "close" } }).catch(() => undefined);
      return res?.ok ? ((await res.json()) as Record<string, unknown>) : undefined;
    };
    const created = await fetch(`${url}/api/v1/stores/${String(store.id)}/imports?kind=customers`, {
      method: "POST",
      headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/x-ndjson", "Content-Encoding": "gzip", Connection: "close" },
      body: file,
    });
    expect(created.status).toBe(202);
    const { id } = (await created.json()) as { id: number };
    await expect.poll(async () => Number((await get(url, `/imports/${id}`))?.processed ?? 0), { timeout: 60_000, interval: 20 }).toBeGreaterThan(0);
    first.child.kill("SIGKILL");
    await first.exited;

    const second = await startProcess("main.js", env);
    running.push(second);
    const again = second.url ?? "";
    await expect.poll(async () => (await get(again, `/imports/${id}`))?.status, { timeout: 120_000, interval: 100 }).toBe("succeeded");
    expect(await get(again, `/imports/${id}`)).toMatchObject({ processed: LINES, created: DISTINCT, updated: LINES - DISTINCT, failed: 0 });
    // Each key's last line won.
    expect(await get(again, "/customers/k-0")).toMatchObject({ first_name: `line ${DISTINCT + 1}` });
    expect(await get(again, `/customers/k-${LINES - DISTINCT}`)).toMatchObject({ first_name: `line ${LINES - DISTINCT + 1}` });
  });
});
