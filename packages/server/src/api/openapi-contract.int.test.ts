import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { onceAcrossDatabases, startTestServer, type TestServer } from "../../test/helpers.js";

const run = promisify(execFile);
const serverDir = path.resolve(import.meta.dirname, "../..");
const bin = (name: string) => path.join(serverDir, "node_modules", ".bin", name);

/**
 * The published document as tools read it: two linters find nothing in it,
 * and a client generated from it (openapi-typescript, with openapi-fetch)
 * type-checks and sends an `Idempotency-Key` the service honours.
 */
describe.runIf(onceAcrossDatabases)("the OpenAPI document, read by tools", () => {
  let server: TestServer;
  let dir: string;
  let documentFile: string;

  beforeAll(async () => {
    server = await startTestServer();
    // Inside the package, so that the generated client finds openapi-fetch as a user's project would.
    dir = fs.mkdtempSync(path.join(serverDir, "test", ".generated-"));
    documentFile = path.join(dir, "openapi.json");
    fs.writeFileSync(documentFile, (await server.request("GET", "/api/v1/openapi.json")).text);
  });
  afterAll(async () => {
    await server?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it("passes Redocly's recommended rules and Spectral's OpenAPI rules with no error and no warning", { timeout: 120_000 }, async () => {
    const redocly = await run(bin("redocly"), ["lint", documentFile, "--format=json", "--config", path.join(serverDir, "redocly.yaml")], { cwd: serverDir }).catch((error: { stdout: string }) => error);
    expect(JSON.parse(redocly.stdout.slice(redocly.stdout.indexOf("{"))).totals).toMatchObject({ errors: 0, warnings: 0 });
    const spectral = await run(bin("spectral"), ["lint", documentFile, "--ruleset", path.join(serverDir, ".spectral.yaml"), "--format", "json", "--quiet"], { cwd: serverDir }).catch((error: { stdout: string }) => error);
    expect(JSON.parse(spectral.stdout || "[]")).toEqual([]);
  });

  it("generates a client that type-checks and sends Idempotency-Key: a retry gets the first answer again", { timeout: 120_000 }, async () => {
    await run(bin("openapi-typescript"), [documentFile, "-o", path.join(dir, "schema.d.ts")], { cwd: serverDir });
    const tenant = await server.createTenant({ country: "US" });
    fs.writeFileSync(
      path.join(dir, "client.ts"),
      `import createClient from "openapi-fetch";
import type { paths } from "./schema.js";

const client = createClient<paths>({ baseUrl: ${JSON.stringify(server.url)}, headers: { Authorization: "Bearer ${tenant.key}" } });
const push = () =>
  client.POST("/api/v1/stores/{store_id}/orders", {
    params: { path: { store_id: ${tenant.store.id} }, header: { "Idempotency-Key": "generated-client-1" } },
    body: { external_id: "gen-1", placed_at: "2026-11-20T14:03:00Z", total_price: 12.5, customer: { phone: "(415) 555-2671" } },
  });
const first = await push();
const again = await push();
const total: string | undefined = first.data?.total_price;
console.log(JSON.stringify({ first: first.response.status, again: again.response.status, replayed: again.response.headers.get("idempotent-replayed"), total }));
`,
    );
    fs.writeFileSync(
      path.join(dir, "tsconfig.json"),
      JSON.stringify({ compilerOptions: { target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", strict: true, noEmit: true, skipLibCheck: true, types: [] }, files: ["client.ts"] }),
    );
    await fs.promises.writeFile(path.join(dir, "package.json"), JSON.stringify({ type: "module" }));
    const typecheck = await run(bin("tsc"), ["-p", path.join(dir, "tsconfig.json")], { cwd: dir }).catch((error: { stdout: string }) => error);
    expect(typecheck.stdout).toBe("");
    const { stdout } = await run(bin("tsx"), [path.join(dir, "client.ts")], { cwd: dir });
    expect(JSON.parse(stdout)).toEqual({ first: 201, again: 201, replayed: "true", total: "12.50" });
  });
});
