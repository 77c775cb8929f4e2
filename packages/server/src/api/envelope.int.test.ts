import { validate } from "@readme/openapi-parser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../db/index.js";
import { pino } from "pino";
import { refuseInserts, startTestServer, testDb, type TestServer } from "../../test/helpers.js";

let server: TestServer;
let tenant: Awaited<ReturnType<TestServer["createTenant"]>>;

beforeAll(async () => {
  server = await startTestServer({ bodyLimitBytes: 4096 });
  tenant = await server.createTenant();
});
afterAll(() => server?.close());

describe("request ids", () => {
  it("echoes a caller's printable X-Request-Id on success and on error", async () => {
    const ok = await server.request("GET", "/healthz", { headers: { "X-Request-Id": "shop-42 trace/1" } });
    expect(ok.headers.get("x-request-id")).toBe("shop-42 trace/1");
    const error = await server.request("POST", `/api/v1/stores/${tenant.store.id}/customers`, { headers: { "X-Request-Id": "req-401" }, body: {} });
    expect(error.status).toBe(401);
    expect(error.headers.get("x-request-id")).toBe("req-401");
  });

  it("makes a new unique id when none, or an unusable one, is sent", async () => {
    const a = await server.request("GET", "/nowhere");
    const b = await server.request("GET", "/healthz", { headers: { "X-Request-Id": "x".repeat(129) } });
    const idA = a.headers.get("x-request-id");
    const idB = b.headers.get("x-request-id");
    expect(idA).toMatch(/^[0-9a-f-]{36}$/);
    expect(idB).toMatch(/^[0-9a-f-]{36}$/);
    expect(idA).not.toBe(idB);
  });
});

describe("error envelope", () => {
  it("404 Not found for an unknown path", async () => {
    for (const path of ["/nowhere", "/api/v1/stores/1/widgets", "/api/v2/stores/1/customers"]) {
      const res = await server.request("GET", path);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: "Not found", code: "not_found" });
    }
  });

  it("405 Method not allowed with Allow on a known path", async () => {
    const res = await server.request("DELETE", `/api/v1/stores/${tenant.store.id}/customers`, { key: tenant.key });
    expect(res.status).toBe(405);
    expect(res.body).toEqual({ error: "Method not allowed", code: "method_not_allowed" });
    expect(res.headers.get("allow")).toBe("GET, POST");
    const put = await server.request("PUT", `/api/v1/stores/${tenant.store.id}/customers/abc`, { key: tenant.key, body: {} });
    expect(put.status).toBe(405);
    expect(put.headers.get("allow")).toBe("GET, DELETE");
  });

  it("413 Request body too large, before authentication", async () => {
    const huge = JSON.stringify({ phone: "+14155552671", first_name: "x".repeat(5000) });
    const res = await server.request("POST", `/api/v1/stores/${tenant.store.id}/customers`, { rawBody: huge });
    expect(res.status).toBe(413);
    expect(res.body).toEqual({ error: "Request body too large", code: "body_too_large" });
  });

  it("answers errors with exactly { error } or { error, details }, never framework fields", async () => {
    const responses = await Promise.all([
      server.request("POST", `/api/v1/stores/${tenant.store.id}/customers`, {}),
      server.request("POST", `/api/v1/stores/${tenant.store.id}/customers`, { key: tenant.key, body: { phone: 1 } }),
      server.request("POST", `/api/v1/stores/${tenant.store.id}/customers`, { key: tenant.key, rawBody: "{" }),
      server.request("DELETE", `/api/v1/stores/${tenant.store.id}/customers/%E0%A4%A`, { key: tenant.key }),
    ]);
    for (const res of responses) {
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.headers.get("content-type")).toMatch(/^application\/json/);
      expect(Object.keys(res.body).sort()).toEqual(res.status === 422 ? ["code", "details", "error"] : ["code", "error"]);
    }
  });
});

describe("the service's own paths", () => {
  it("answer other methods with 405 and Allow", async () => {
    for (const path of ["/healthz", "/readyz", "/api/v1/openapi.json", "/docs"]) {
      const res = await server.request("POST", path, { body: {} });
      expect(res.status).toBe(405);
      expect(res.body).toEqual({ error: "Method not allowed", code: "method_not_allowed" });
      expect(res.headers.get("allow")).toBe("GET, HEAD");
    }
  });
});

describe("compressed bodies", () => {
  it("a broken gzip body is 400 Malformed JSON body", async () => {
    const res = await server.request("POST", `/api/v1/stores/${tenant.store.id}/customers`, {
      key: tenant.key,
      rawBody: Buffer.from("definitely not gzip"),
      headers: { "Content-Encoding": "gzip" },
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: "Malformed JSON body", code: "malformed_json" });
  });

  it("a gzip body is read", async () => {
    const { gzipSync } = await import("node:zlib");
    const res = await server.request("POST", `/api/v1/stores/${tenant.store.id}/customers`, {
      key: tenant.key,
      rawBody: gzipSync(JSON.stringify({ external_id: "gzipped", phone: "+14155552671" })),
      headers: { "Content-Encoding": "gzip" },
    });
    expect(res.status).toBe(201);
  });
});

describe("logs", () => {
  it("keep no key, body, phone or input value, even when a request fails in the database", async () => {
    const lines: string[] = [];
    const logger = pino({ level: "info" }, { write: (line: string) => lines.push(line) });
    const logged = await startTestServer({ logger, database: server.handle });
    const restore = await refuseInserts(server.db, "orders", "logtest-");
    try {
      const secret = "Lovelace-4242";
      await logged.request("POST", `/api/v1/stores/${tenant.store.id}/customers`, { key: tenant.key, body: { phone: "+14155550142", last_name: secret } });
      await logged.request("PUT", `/api/v1/stores/${tenant.store.id}/customers/%2B14155550142`, { key: tenant.key });
      await logged.request("GET", `/nowhere/%2B14155550142`);
      const failed = await logged.request("POST", `/api/v1/stores/${tenant.store.id}/orders`, {
        key: tenant.key,
        body: { external_id: "logtest-1", placed_at: "2026-11-22T10:00:00Z", total_price: 1, customer: { phone: "+14155550142", last_name: secret } },
      });
      expect(failed.status).toBe(500);
      const all = lines.join("\n");
      expect(lines.length).toBeGreaterThanOrEqual(5);
      expect(all).toContain('"msg":"request failed"');
      for (const forbidden of [tenant.key, secret, "4155550142", "logtest-1", "Authorization"]) expect(all).not.toContain(forbidden);
    } finally {
      await restore();
      await logged.close();
    }
  });
});

describe("health", () => {
  it("/healthz says the process is up and /readyz that the database answers", async () => {
    expect((await server.request("GET", "/healthz")).body).toEqual({ status: "ok" });
    const ready = await server.request("GET", "/readyz");
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ status: "ready" });
  });
});

describe("database unreachable", () => {
  it("503 Service unavailable with Retry-After, and /readyz says so", async () => {
    const handle =
      testDb === "postgres"
        ? await openDatabase({ kind: "postgres", url: "postgres://postgres@127.0.0.1:1/none" })
        : await openDatabase({ kind: "embedded", dataDir: undefined });
    if (testDb === "embedded") await handle.close();
    const down = await startTestServer({ database: handle });
    try {
      const res = await down.request("POST", "/api/v1/stores/1/customers", { key: "AAAAAAAAAAAAAAAAAAAAAAAA", body: { phone: "+14155552671" } });
      expect(res.status).toBe(503);
      expect(res.body).toEqual({ error: "Service unavailable", code: "service_unavailable" });
      expect(res.headers.get("retry-after")).toBe("5");
      const ready = await down.request("GET", "/readyz");
      expect(ready.status).toBe(503);
    } finally {
      await down.close();
      if (testDb === "postgres") await handle.close();
    }
  });
});

describe("OpenAPI document", () => {
  it("is valid OpenAPI 3 and documents the paths with their real statuses and our error schema", async () => {
    const res = await server.request("GET", "/api/v1/openapi.json");
    expect(res.status).toBe(200);
    const document = res.body;
    expect(document.openapi).toMatch(/^3\./);
    const result = await validate(structuredClone(document));
    expect(result.valid ? [] : result.errors).toEqual([]);

    const documented = [
      ["post", "/api/v1/stores/{store_id}/orders"],
      ["patch", "/api/v1/stores/{store_id}/orders/{external_id}"],
      ["post", "/api/v1/stores/{store_id}/customers"],
      ["delete", "/api/v1/stores/{store_id}/customers/{external_id}"],
      ["post", "/api/v1/stores/{store_id}/checkouts"],
      ["patch", "/api/v1/stores/{store_id}/checkouts/{external_id}"],
      ["post", "/api/v1/stores/{store_id}/shipments"],
    ];
    for (const [method, path] of documented) expect(document.paths[path ?? ""]?.[method ?? ""], `${method} ${path}`).toBeDefined();
    // The seven published operations, the read-back GETs (one of them on a path of its own), the four batch endpoints and the imports' three paths.
    expect(Object.keys(document.paths)).toHaveLength(15);
    for (const resource of ["orders", "customers", "checkouts", "shipments"]) expect(document.paths[`/api/v1/stores/{store_id}/${resource}/batch`]?.post).toBeDefined();
    expect(document.paths["/api/v1/stores/{store_id}/shipments/{external_id}"].get.responses["404"].content["application/json"].examples.shipment_not_found.value).toEqual({ error: "Shipment not found", code: "shipment_not_found" });
    expect(Object.keys(document.paths["/api/v1/stores/{store_id}/orders/{external_id}"].patch.responses)).toEqual(expect.arrayContaining(["200", "404", "422"]));
    const orderNotFound = document.paths["/api/v1/stores/{store_id}/orders/{external_id}"].patch.responses["404"].content["application/json"].examples;
    // The store's 404 and the order's are told apart by their codes.
    expect(Object.keys(orderNotFound)).toEqual(expect.arrayContaining(["store_not_found", "order_not_found"]));
    expect(orderNotFound.order_not_found.value).toEqual({ error: "Order not found", code: "order_not_found" });
    const customers = document.paths["/api/v1/stores/{store_id}/customers"].post;
    expect(Object.keys(customers.responses)).toEqual(expect.arrayContaining(["201", "200", "401", "403", "404", "413", "415", "422", "429"]));
    expect(customers.responses["422"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/Error" });
    expect(customers.security).toEqual([{ bearerAuth: [] }]);
    const parameter = (p: { name?: string; in?: string; $ref?: string }) => (p.$ref ? document.components.parameters[p.$ref.split("/").at(-1) ?? ""] : p) as { name: string; in: string };
    expect(customers.parameters.map((p: { name: string; in: string }) => `${parameter(p).in}:${parameter(p).name}`)).toEqual(expect.arrayContaining(["path:store_id", "header:X-Request-Id", "header:X-Backfill", "header:Idempotency-Key"]));
    expect(customers.responses["201"].headers).toHaveProperty("X-Request-Id");
    const erase = document.paths["/api/v1/stores/{store_id}/customers/{external_id}"].delete;
    expect(Object.keys(erase.responses)).toContain("204");
    expect(erase.responses["200"]).toBeUndefined();
    expect(document.components.securitySchemes.bearerAuth).toMatchObject({ type: "http", scheme: "bearer" });
    expect(Object.keys(document.paths).every((path: string) => path.startsWith("/api/v1/"))).toBe(true);
  });

  it("documents each operation's own errors, as its procedure declares them", async () => {
    const document = (await server.request("GET", "/api/v1/openapi.json")).body;
    const shipments = document.paths["/api/v1/stores/{store_id}/shipments"].post;
    const unprocessable = shipments.responses["422"].content["application/json"].examples;
    expect(unprocessable.shipment_order_not_found.value).toEqual({
      error: "Order not found",
      code: "shipment_order_not_found",
      details: [{ path: "order_external_id", message: "no order of this store has this external_id" }],
    });
    expect(unprocessable.validation_failed.value).toMatchObject({ error: "Invalid request body", code: "validation_failed", details: expect.arrayContaining([{ path: "financial_staus", message: "unknown field" }]) });
    const checkoutPatch = document.paths["/api/v1/stores/{store_id}/checkouts/{external_id}"].patch;
    expect(checkoutPatch.responses["404"].content["application/json"].examples.checkout_not_found.value).toEqual({ error: "Checkout not found", code: "checkout_not_found" });
    expect(checkoutPatch.requestBody.content["application/json"].schema.properties).toHaveProperty("status");
    const erase = document.paths["/api/v1/stores/{store_id}/customers/{external_id}"].delete;
    expect(erase.requestBody).toBeUndefined();
    // "Try it out" must not pre-fill X-Backfill: a push from /docs would silently trigger nothing.
    expect(document.paths["/api/v1/stores/{store_id}/orders"].post.parameters).toContainEqual({ $ref: "#/components/parameters/Backfill" });
    const backfill = document.components.parameters.Backfill;
    expect(backfill.name).toBe("X-Backfill");
    expect(backfill.schema.example).toBeUndefined();
    expect(backfill.example).toBeUndefined();
    // An erasure reads no body: its only 422 is an Idempotency-Key sent again with another request.
    expect(Object.keys(erase.responses["422"].content["application/json"].examples)).toEqual(["idempotency_key_reused"]);
    expect(Object.keys(erase.responses).sort()).toEqual(["204", "401", "403", "404", "409", "422", "429", "500", "503"]);
  });

  it("serves an interactive reference at /docs with its assets", async () => {
    const page = await server.request("GET", "/docs");
    expect(page.status).toBe(200);
    expect(page.text).toContain("swagger-ui-bundle.js");
    const script = await fetch(`${server.url}/docs/assets/swagger-ui-bundle.js`);
    expect(script.status).toBe(200);
    const init = await server.request("GET", "/docs/init.js");
    expect(init.text).toContain("/api/v1/openapi.json");
  });
});
