import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startProcess, stopAll, tempDir, type Proc, PROCESS_TEST_TIMEOUT_MS } from "../packages/server/test/processes.js";

// Each test starts processes: on a busy machine that takes longer (see PROCESS_START_TIMEOUT_MS).
vi.setConfig({ testTimeout: PROCESS_TEST_TIMEOUT_MS, hookTimeout: PROCESS_TEST_TIMEOUT_MS });

const run = promisify(execFile);
const here = import.meta.dirname;
const procs: Proc[] = [];
let dataDir: string;

// Each example runs as a newcomer would run it: against a freshly started service, reading its demo.env.
beforeAll(async () => {
  dataDir = tempDir();
  procs.push(await startProcess("main.js", { DATA_DIR: dataDir }));
  // The demo credentials are written just after the server starts listening.
  for (let waited = 0; !fs.existsSync(path.join(dataDir, "demo.env")); waited += 100) {
    if (waited > 15_000) throw new Error("the service wrote no demo.env");
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
});
afterAll(() => stopAll(procs));

const example = (name: string, ...args: string[]) =>
  run(process.execPath, [path.join(here, "run.mjs"), name, ...args], { env: { PATH: process.env.PATH ?? "", DATA_DIR: dataDir }, timeout: 60_000 });

describe("examples against a freshly started service", () => {
  it.each([
    ["verify-key", /Key verified against http:\/\/127\.0\.0\.1:\d+: store \d+ accepts pushes[\s\S]*What this triggered:\n {2}contact_sync +customer onboarding-check +message to \+12025550143: sent/],
    [
      "push-order",
      /Order example-order-\w+: created[\s\S]*Pushed again: updated[\s\S]*Marked paid[\s\S]*What this triggered:\n(?=[\s\S]* {2}post_purchase +order example-order-\w+ +message to \+12025550143: sent)(?=[\s\S]* {2}contact_sync +customer example-customer-1 +message to \+12025550143: sent)/,
    ],
    ["abandoned-checkout", /status abandoned[\s\S]*status still abandoned[\s\S]*status recovered[\s\S]*What this triggered:[\s\S]* {2}checkout_recovery +checkout example-checkout-\w+ +cancelled/],
    [
      "shipment",
      /created, status pending[\s\S]*updated, status in_transit[\s\S]*updated, status delivered[\s\S]*What this triggered:\n {2}post_purchase +order example-shipped-order-\w+ +message to \+12025550143: sent(\n {2}shipping_notification +shipment example-shipment-\w+ +message to \+12025550143: sent){3}/,
    ],
    ["erasure", /Erased: 204[\s\S]*unknown customer: 204[\s\S]*keyed by its phone: \+12025550188[\s\S]*created anew[\s\S]*What this triggered:\n {2}contact_sync +customer example-erase-\w+/],
    [
      "webhook-receiver",
      /post_purchase: thank Ada for order 1001 \(129\.90 USD\)\n {2}shipping_notification: tell \+12025550143 that shipment s-1 is in_transit\n {2}msg-1: a repeat, dropped\n {2}refused: Signature does not match\nA message signed with another secret was answered 400/,
    ],
    ["shopify-bridge", /checkouts\/create: checkout [\w-]+ created, abandoned[\s\S]*orders\/create: order \d+ created[\s\S]*completed[\s\S]*status pending[\s\S]*status in_transit[\s\S]*skipped, the order has no phone[\s\S]*customer 7000001 erased[\s\S]*forged webhook was answered 401[\s\S]*not JSON was answered 400[\s\S]*What this triggered:[\s\S]*post_purchase +order \d+/],
  ])("%s runs green", async (name, expected) => {
    const { stdout } = await example(name);
    expect(stdout).toMatch(expected);
  });

  it("lists the examples when none is named", async () => {
    await expect(example("nope")).rejects.toMatchObject({ code: 2, stderr: expect.stringContaining("shopify-bridge") });
  });
});
