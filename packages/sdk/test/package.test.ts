import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);
const sdkDir = path.resolve(import.meta.dirname, "..");
const tsc = path.resolve(sdkDir, "node_modules/typescript/bin/tsc");

const usage = `
const client = new CommerceIngestClient({ apiKey: "k".repeat(24), baseUrl: "http://127.0.0.1:1" });
const bound = client.store(1);
const order: OrderInput = { external_id: "o1", placed_at: "2026-11-22T10:00:00Z", total_price: 1, customer: { phone: "+14155552671" } };
async function typed(): Promise<string> {
  const result: UpsertResult<Order> = await bound.orders.upsert(order);
  const created: boolean = result.created;
  return result.data.total_price + String(created);
}
void typed;
// @ts-expect-error total_price must be a number
const wrong: OrderInput = { ...order, total_price: "1" };
void wrong;
`;

/** The files a checkout of the package holds (its tsconfig extends the repository's), without its build. */
const sources = ["src", "bin", "package.json", "tsup.config.ts", "tsconfig.json", "README.md", "CHANGELOG.md"];

/**
 * A copy of the package's sources beside it, with no dist. Packing runs the package's build, which
 * empties dist first; done in the package itself, it would pull dist/cli.js from under the tests
 * that run the command line at the same time.
 */
function copyOfPackage(): string {
  const copy = fs.mkdtempSync(path.join(sdkDir, "..", ".sdk-copy-"));
  for (const file of sources) fs.cpSync(path.join(sdkDir, file), path.join(copy, file), { recursive: true });
  fs.symlinkSync(path.join(sdkDir, "node_modules"), path.join(copy, "node_modules"));
  return copy;
}

let packed: Promise<string> | undefined;

/** The tarball `pnpm publish` would upload (workspace and catalog versions resolved), packed once per run. */
function pack(): Promise<string> {
  packed ??= (async () => {
    const copy = copyOfPackage();
    try {
      const work = fs.mkdtempSync(path.join(os.tmpdir(), "sdk-pack-"));
      const { stdout } = await run("pnpm", ["pack", "--pack-destination", work], { cwd: copy });
      const tarball = stdout.trim().split("\n").pop() ?? "";
      expect(fs.existsSync(tarball)).toBe(true);
      return tarball;
    } finally {
      fs.rmSync(copy, { recursive: true, force: true });
    }
  })();
  return packed;
}

/**
 * The packed tarball, unpacked into a project outside the workspace as npm
 * would install it: no registry, no network, only the files the package
 * really ships, and nothing else in node_modules (it has no dependency).
 */
async function installPacked(work: string): Promise<string> {
  const tarball = await pack();
  const project = path.join(work, "consumer");
  const installed = path.join(project, "node_modules/@commerce-ingest/sdk");
  fs.mkdirSync(installed, { recursive: true });
  fs.writeFileSync(path.join(project, "package.json"), JSON.stringify({ name: "consumer", version: "1.0.0", private: true }));
  await run("tar", ["-xzf", tarball, "-C", installed, "--strip-components=1"]);
  const manifest = JSON.parse(fs.readFileSync(path.join(installed, "package.json"), "utf8")) as Record<string, unknown>;
  expect({ dependencies: manifest.dependencies, peerDependencies: manifest.peerDependencies, optionalDependencies: manifest.optionalDependencies }).toEqual({
    dependencies: undefined,
    peerDependencies: undefined,
    optionalDependencies: undefined,
  });
  return project;
}

describe("the packed SDK in a project outside the workspace", () => {
  it("installs from the npm pack tarball and works from import and require, with types", { timeout: 120_000 }, async () => {
    const work = fs.mkdtempSync(path.join(os.tmpdir(), "sdk-consumer-"));
    const project = await installPacked(work);
    const shipped = fs.readdirSync(path.join(project, "node_modules/@commerce-ingest/sdk")).sort();
    expect(shipped).toEqual(["CHANGELOG.md", "README.md", "bin", "dist", "package.json"]);

    fs.writeFileSync(
      path.join(project, "esm.mjs"),
      `import { CommerceIngestClient, ValidationError, verifyWebhook } from "@commerce-ingest/sdk";
const client = new CommerceIngestClient({ apiKey: "k".repeat(24), baseUrl: "http://127.0.0.1:1", maxRetries: 0 });
const error = await client.customers.upsert(1, { phone: "+14155552671" }).catch((e) => e);
console.log(JSON.stringify({ kind: "esm", error: error.name, client: typeof client.store(1).orders.upsert, verify: typeof verifyWebhook, v: typeof ValidationError }));`,
    );
    fs.writeFileSync(
      path.join(project, "cjs.cjs"),
      `const { CommerceIngestClient, ConnectionError } = require("@commerce-ingest/sdk");
const client = new CommerceIngestClient({ apiKey: "k".repeat(24), baseUrl: "http://127.0.0.1:1", maxRetries: 0 });
client.orders.update(1, "x", {}).catch((e) => console.log(JSON.stringify({ kind: "cjs", error: e.name, isConnection: e instanceof ConnectionError })));`,
    );
    // On each Node.js the package says it supports: this one, and the newest 22 and 24 (installed from npm as devDependencies).
    const runtimes = [process.execPath, ...["node-22", "node-24"].map((name) => path.join(sdkDir, "node_modules", name, "bin", "node"))];
    const versions: string[] = [];
    for (const node of runtimes) {
      versions.push((await run(node, ["--version"])).stdout.trim().split(".")[0] ?? "");
      const esm = await run(node, ["esm.mjs"], { cwd: project });
      expect(JSON.parse(esm.stdout)).toEqual({ kind: "esm", error: "ConnectionError", client: "function", verify: "function", v: "function" });
      const cjs = await run(node, ["cjs.cjs"], { cwd: project });
      expect(JSON.parse(cjs.stdout)).toEqual({ kind: "cjs", error: "ConnectionError", isConnection: true });
    }
    expect(versions).toEqual(["v20", "v22", "v24"]);

    expect(fs.readdirSync(path.join(project, "node_modules"))).toEqual(["@commerce-ingest"]);
  });

  it("installs with npm from the tarball, and its command runs as `npx @commerce-ingest/sdk` runs it", { timeout: 120_000 }, async () => {
    const work = fs.mkdtempSync(path.join(os.tmpdir(), "sdk-npx-"));
    const tarball = await pack();
    const project = path.join(work, "shop");
    fs.mkdirSync(project);
    fs.writeFileSync(path.join(project, "package.json"), JSON.stringify({ name: "shop", version: "1.0.0", private: true }));
    // The package has no dependency, so npm needs no registry to install it.
    await run("npm", ["install", "--offline", "--no-audit", "--no-fund", tarball], { cwd: project });
    const help = await run("npx", ["--offline", "@commerce-ingest/sdk", "--help"], { cwd: project });
    expect(help.stdout).toContain("Usage: commerce-ingest import --store <id> --kind <orders|customers|checkouts|shipments> <file.ndjson[.gz]>");
    const wrong = await run("npx", ["--offline", "@commerce-ingest/sdk", "import", "--store", "1", "--kind", "invoices", "orders.ndjson"], { cwd: project }).catch((error: { code: number; stderr: string }) => error);
    expect(wrong).toMatchObject({ code: 2, stderr: expect.stringContaining("--kind must be orders, customers, checkouts or shipments") });
  });

  it("type-checks in a fresh app with NodeNext, and with CommonJS and Node10 resolution, without zod", { timeout: 120_000 }, async () => {
    const work = fs.mkdtempSync(path.join(os.tmpdir(), "sdk-types-"));
    const project = await installPacked(work);
    const source = `import { CommerceIngestClient, type Order, type OrderInput, type UpsertResult } from "@commerce-ingest/sdk";\n${usage}`;
    fs.writeFileSync(path.join(project, "check.mts"), source);
    fs.writeFileSync(path.join(project, "check.cts"), source);
    fs.writeFileSync(path.join(project, "check.ts"), source);
    // Without lib checks skipped: the SDK's own declaration files must compile too.
    const common = ["--noEmit", "--strict", "--target", "es2022", "--types", "node", "--typeRoots", path.resolve(sdkDir, "node_modules/@types")];
    await run(process.execPath, [tsc, ...common, "--module", "nodenext", "--moduleResolution", "nodenext", "check.mts", "check.cts"], { cwd: project });
    await run(process.execPath, [tsc, ...common, "--module", "commonjs", "--moduleResolution", "node10", "--esModuleInterop", "check.ts"], { cwd: project });
    const declarations = fs.readFileSync(path.join(project, "node_modules/@commerce-ingest/sdk/dist/index.d.ts"), "utf8");
    expect(declarations).not.toMatch(/from ["'](zod|@commerce-ingest\/shared)/);
  });

  it("packs its code from a checkout that never built it: packing builds it first", { timeout: 120_000 }, async () => {
    const clean = copyOfPackage();
    try {
      expect(fs.existsSync(path.join(clean, "dist"))).toBe(false);
      const { stdout } = await run("npm", ["pack", "--dry-run", "--json"], { cwd: clean });
      // The build's own lines come first (CI shows them): the JSON starts on a line of its own.
      const [packed] = JSON.parse(stdout.slice(stdout.search(/^\[$/m))) as Array<{ files: Array<{ path: string }> }>;
      expect(packed?.files.map((file) => file.path)).toEqual(expect.arrayContaining(["dist/index.js", "dist/index.cjs", "dist/index.d.ts", "dist/index.d.cts"]));
    } finally {
      fs.rmSync(clean, { recursive: true, force: true });
    }
  });

  it("is ready to publish: npm publish --dry-run of the packed tarball", { timeout: 120_000 }, async () => {
    const work = fs.mkdtempSync(path.join(os.tmpdir(), "sdk-publish-"));
    const tarball = await pack();
    const { stdout, stderr } = await run("npm", ["publish", "--dry-run", "--access", "public", tarball], { cwd: work });
    const { version } = JSON.parse(fs.readFileSync(path.join(sdkDir, "package.json"), "utf8")) as { version: string };
    expect(`${stdout}${stderr}`).toContain(`+ @commerce-ingest/sdk@${version}`);
    // Versions are made by Changesets, which writes the changelog entry of each.
    expect(fs.readFileSync(path.join(sdkDir, "CHANGELOG.md"), "utf8")).toContain(`\n## ${version}\n`);
  });
});
