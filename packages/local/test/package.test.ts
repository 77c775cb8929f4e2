import { execFile, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);
const localDir = path.resolve(import.meta.dirname, "..");
const sdkDir = path.resolve(localDir, "../sdk");

/** The tarball `pnpm publish` would upload (workspace and catalog versions resolved). */
async function pack(dir: string, work: string): Promise<string> {
  const { stdout } = await run("pnpm", ["pack", "--pack-destination", work], { cwd: dir });
  const tarball = stdout.trim().split("\n").pop() ?? "";
  expect(fs.existsSync(tarball)).toBe(true);
  return tarball;
}

/**
 * The SDK's tarball as built (by the test command's build), without its `prepack`: the SDK's own tests pack it
 * at the same time, and a second build would empty its `dist` under them. It has no dependency to resolve.
 */
async function packBuiltSdk(work: string): Promise<string> {
  const { stdout } = await run("npm", ["pack", "--ignore-scripts", "--pack-destination", work], { cwd: sdkDir });
  const tarball = path.join(work, stdout.trim().split("\n").pop() ?? "");
  expect(fs.existsSync(tarball)).toBe(true);
  return tarball;
}

/** An integrator's own test, with Node's test runner: the service started in one line, used through the SDK, stopped. */
const integratorTest = `import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { startLocalIngest } from "@commerce-ingest/local";
import { CommerceIngestClient, ValidationError } from "@commerce-ingest/sdk";

let ingest;
let shop;
before(async () => {
  ingest = await startLocalIngest();
  shop = new CommerceIngestClient({ apiKey: ingest.apiKey, baseUrl: ingest.url }).store(ingest.storeId);
});
after(() => ingest.stop());

test("an order is stored and thanked for", async () => {
  const result = await shop.orders.upsert({ external_id: "1001", placed_at: "2026-11-22T10:00:00Z", total_price: 59.9, customer: { phone: "(415) 555-2671", first_name: "Ada" } });
  assert.equal(result.created, true);
  assert.equal(result.data.total_price, "59.90");
  const [message] = await ingest.waitForMessages(1, { flow: "post_purchase" });
  assert.equal(message.to_phone, "+14155552671");
  assert.equal(message.content.order.external_id, "1001");
});

test("a bad order is refused as the API refuses it", async () => {
  const error = await shop.orders.upsert({ external_id: "1002", placed_at: "yesterday", total_price: 1 }).catch((e) => e);
  assert.ok(error instanceof ValidationError);
  assert.equal(error.code, "validation_failed");
});
`;

describe("the packed local instance in a project outside the workspace", () => {
  it("starts in one line of an integrator's test on Node.js 20 and 22, and its command runs by hand", { timeout: 600_000 }, async () => {
    const work = fs.mkdtempSync(path.join(os.tmpdir(), "local-consumer-"));
    let byHand: ReturnType<typeof spawn> | undefined;
    try {
      const tarballs = [await pack(localDir, work), await packBuiltSdk(work)];
      const project = path.join(work, "shop");
      fs.mkdirSync(project);
      fs.writeFileSync(path.join(project, "package.json"), JSON.stringify({ name: "shop", version: "1.0.0", private: true, type: "module" }));
      // The service's libraries come from the registry, as for any integrator (npm's cache first).
      await run("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", "--save-dev", ...tarballs], { cwd: project, timeout: 400_000 });
      fs.writeFileSync(path.join(project, "orders.test.mjs"), integratorTest);

      // This Node.js and the newest 22 (the SDK's test dependency, from npm).
      const runtimes = [process.execPath, path.join(sdkDir, "node_modules/node-22/bin/node")];
      const versions: string[] = [];
      for (const node of runtimes) {
        versions.push((await run(node, ["--version"])).stdout.trim().split(".")[0] ?? "");
        const { stdout } = await run(node, ["--test", "--test-reporter=tap", "orders.test.mjs"], { cwd: project, timeout: 120_000 });
        expect(stdout).toMatch(/^# pass 2$/m);
        expect(stdout).toMatch(/^# fail 0$/m);
      }
      expect(versions).toEqual(["v20", "v22"]);

      // By hand: `npx commerce-ingest-local` prints where it is and a key that works, and Ctrl-C (SIGINT to its
      // process group, as a terminal sends it) stops it.
      const child = spawn("npx", ["--offline", "commerce-ingest-local"], { cwd: project, stdio: ["ignore", "pipe", "pipe"], detached: true });
      byHand = child;
      let printed = "";
      child.stdout.on("data", (chunk: Buffer) => (printed += chunk.toString()));
      await expect.poll(() => printed, { timeout: 60_000 }).toContain("STORE_ID=");
      const value = (name: string) => new RegExp(`${name}=(\\S+)`).exec(printed)?.[1] ?? "";
      const response = await fetch(`${value("COMMERCE_INGEST_BASE_URL")}/api/v1/stores/${value("STORE_ID")}/customers`, {
        method: "POST",
        headers: { Authorization: `Bearer ${value("COMMERCE_INGEST_API_KEY")}`, "Content-Type": "application/json" },
        body: JSON.stringify({ external_id: "c1", phone: "+14155552671" }),
      });
      expect(response.status).toBe(201);
      process.kill(-(child.pid ?? 0), "SIGINT");
      await expect.poll(() => fetch(`${value("COMMERCE_INGEST_BASE_URL")}/healthz`).then(() => "answers", () => "stopped"), { timeout: 30_000 }).toBe("stopped");
      byHand = undefined;
    } finally {
      if (byHand?.pid) {
        try {
          process.kill(-byHand.pid, "SIGKILL");
        } catch {
          // already ended
        }
      }
      fs.rmSync(work, { recursive: true, force: true });
    }
  });
});
