import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startProcess, stopAll, tempDir, type Proc } from "../packages/server/test/processes.js";

const run = promisify(execFile);
const here = import.meta.dirname;
const procs: Proc[] = [];
let dataDir: string;

// Each example runs as a newcomer would run it: against a freshly started service, reading its demo.env.
beforeAll(async () => {
  dataDir = tempDir();
  procs.push(await startProcess("main.js", { DATA_DIR: dataDir }));
});
afterAll(() => stopAll(procs));

const example = (name: string, ...args: string[]) =>
  run(process.execPath, [path.join(here, "run.mjs"), name, ...args], { env: { PATH: process.env.PATH ?? "", DATA_DIR: dataDir }, timeout: 60_000 });

describe("examples against a freshly started service", () => {
  it.each([
    ["verify-key", /Key verified against http:\/\/127\.0\.0\.1:\d+: store \d+ accepts pushes/],
    ["push-order", /Order example-order-\w+: created[\s\S]*Pushed again: updated[\s\S]*Marked paid/],
    ["abandoned-checkout", /status abandoned[\s\S]*status still abandoned[\s\S]*status recovered/],
    ["shipment", /created, status pending[\s\S]*updated, status in_transit[\s\S]*updated, status delivered/],
    ["erasure", /Erased: 204[\s\S]*unknown customer: 204[\s\S]*keyed by its phone: \+12025550188[\s\S]*created anew/],
    ["shopify-bridge", /checkouts\/create: checkout [\w-]+ created, abandoned[\s\S]*orders\/create: order \d+ created[\s\S]*completed[\s\S]*status pending[\s\S]*status in_transit[\s\S]*skipped, the order has no phone[\s\S]*customer 7000001 erased[\s\S]*forged webhook was answered 401[\s\S]*not JSON was answered 400/],
  ])("%s runs green", async (name, expected) => {
    const { stdout } = await example(name);
    expect(stdout).toMatch(expected);
  });

  it("lists the examples when none is named", async () => {
    await expect(example("nope")).rejects.toMatchObject({ code: 2, stderr: expect.stringContaining("shopify-bridge") });
  });
});
