import { beforeAll, describe, expect, it } from "vitest";
import * as tenants from "./tenant.service.js";
import { withTestServer, type TestServer, type TestTenant } from "../../test/helpers.js";

type Operation = {
  parameters?: Array<{ name: string; in: string; required?: boolean; example?: unknown } | { $ref: string }>;
  requestBody?: { content: Record<string, { example?: unknown }> };
};

let server: TestServer;
let tenant: TestTenant;
withTestServer((started, created) => ([server, tenant] = [started, created]));
/** Every store-scoped operation the API documents, as [method, path template, operation]. */
let operations: Array<readonly [string, string, Operation]>;

beforeAll(async () => {
  const document = (await server.request("GET", "/api/v1/openapi.json")).body as { paths: Record<string, Record<string, Operation>> };
  operations = Object.entries(document.paths)
    .filter(([path]) => path.startsWith("/api/v1/stores/{store_id}/"))
    .flatMap(([path, item]) => Object.entries(item).map(([method, operation]) => [method.toUpperCase(), path, operation] as const));
});

/** The operation's call on `storeId` as its documented example sends it: path parameters, required query and body. */
function call(method: string, template: string, operation: Operation, storeId: number | string) {
  let path = template.replace("{store_id}", String(storeId));
  for (const parameter of operation.parameters ?? []) {
    if ("$ref" in parameter || parameter.name === "store_id") continue;
    const example = parameter.name === "import_id" ? "1" : String(parameter.example);
    if (parameter.in === "path") path = path.replace(`{${parameter.name}}`, encodeURIComponent(example));
    if (parameter.in === "query" && parameter.required) path += `${path.includes("?") ? "&" : "?"}${parameter.name}=${encodeURIComponent(example)}`;
  }
  const file = operation.requestBody?.content["application/x-ndjson"]?.example as string | undefined;
  const json = operation.requestBody?.content["application/json"]?.example;
  const body = file !== undefined ? { rawBody: file, contentType: "application/x-ndjson" } : json === undefined ? {} : { body: json };
  return { method, path, body };
}

/** Everything a store holds: records, jobs, imports and request rows written by a call would show here. */
async function storeContents(storeId: number) {
  const count = async (table: "customers" | "orders" | "checkouts" | "shipments" | "automation_jobs" | "imports") =>
    (await server.db.selectFrom(table).select("id").where("store_id", "=", storeId).execute()).length;
  return Promise.all((["customers", "orders", "checkouts", "shipments", "automation_jobs", "imports"] as const).map(count));
}

describe("the authentication table, on every store endpoint the API documents", () => {
  it("covers them all", () => {
    expect(operations.length).toBeGreaterThanOrEqual(20);
  });

  it("401 API key is missing, 401 Invalid API key (unknown, malformed, another scheme, deleted)", async () => {
    const deleted = await tenants.createApiKey(server.db, { team_id: tenant.team.id, name: "deleted" });
    await tenants.deleteApiKey(server.db, deleted.id);
    const seen: string[] = [];
    for (const [method, template, operation] of operations) {
      const { path, body } = call(method, template, operation, tenant.store.id);
      for (const [name, headers, expected] of [
        ["none", {}, { error: "API key is missing", code: "api_key_missing" }],
        ["unknown", { Authorization: "Bearer AAAAAAAAAAAAAAAAAAAAAAAA" }, { error: "Invalid API key", code: "invalid_api_key" }],
        ["malformed", { Authorization: "Bearer short" }, { error: "Invalid API key", code: "invalid_api_key" }],
        ["basic", { Authorization: "Basic dXNlcjpwYXNz" }, { error: "Invalid API key", code: "invalid_api_key" }],
        ["deleted", { Authorization: `Bearer ${deleted.key}` }, { error: "Invalid API key", code: "invalid_api_key" }],
      ] as const) {
        const res = await server.request(method, path, { ...body, headers });
        seen.push(`${method} ${template} ${name}: ${res.status} ${JSON.stringify(res.body)}`);
        expect(`${method} ${template} ${name}: ${res.status} ${JSON.stringify(res.body)}`).toBe(`${method} ${template} ${name}: 401 ${JSON.stringify(expected)}`);
      }
    }
    expect(seen.length).toBe(operations.length * 5);
    expect(await storeContents(tenant.store.id)).toEqual([0, 0, 0, 0, 0, 0]);
  });

  it("403 for another team's store and for a store-restricted key on another store; 404 for an unknown or paused store; nothing written", async () => {
    const other = await server.createTenant();
    const second = await tenants.createStore(server.db, { team_id: tenant.team.id, name: "Second", country: "US" });
    const restricted = await tenants.createApiKey(server.db, { team_id: tenant.team.id, name: "first store only", store_id: tenant.store.id });
    const paused = await server.createTenant({ paused: true });
    const forbidden = { error: "API key does not authorize this store", code: "store_not_authorized" };
    const notFound = { error: "Store not found or paused", code: "store_not_found" };
    for (const [method, template, operation] of operations) {
      for (const [name, storeId, key, expected] of [
        ["another team's store", other.store.id, tenant.key, [403, forbidden]],
        ["another team's paused store", paused.store.id, tenant.key, [403, forbidden]],
        ["a restricted key on another store", second.id, restricted.key, [403, forbidden]],
        ["an unknown store", 999_999_999, tenant.key, [404, notFound]],
        ["a paused store", paused.store.id, paused.key, [404, notFound]],
      ] as const) {
        const { path, body } = call(method, template, operation, storeId);
        const res = await server.request(method, path, { key, ...body });
        expect(`${method} ${template}, ${name}: ${res.status} ${JSON.stringify(res.body)}`).toBe(`${method} ${template}, ${name}: ${expected[0]} ${JSON.stringify(expected[1])}`);
      }
    }
    for (const storeId of [other.store.id, second.id, paused.store.id]) expect(await storeContents(storeId)).toEqual([0, 0, 0, 0, 0, 0]);
  });
});
