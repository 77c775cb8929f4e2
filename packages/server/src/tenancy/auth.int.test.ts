import { describe, expect, it } from "vitest";
import * as tenants from "./tenant.service.js";
import { startTestServer, withTestServer, type TestServer, type TestTenant } from "../../test/helpers.js";

let server: TestServer;
let tenant: TestTenant;
withTestServer((started, created) => ([server, tenant] = [started, created]));

const customersPath = (storeId: number | string) => `/api/v1/stores/${storeId}/customers`;
const customer = (externalId: string) => ({ external_id: externalId, phone: "+14155552671" });

async function customerCount(storeId: number): Promise<number> {
  const rows = await server.db.selectFrom("customers").select("id").where("store_id", "=", storeId).execute();
  return rows.length;
}

describe("the spec's authentication table", () => {
  it("401 API key is missing without an Authorization header", async () => {
    const res = await server.request("POST", customersPath(tenant.store.id), { body: customer("a1") });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: "API key is missing", code: "api_key_missing" });
  });

  for (const [name, header] of [
    ["an unknown key", "Bearer AAAAAAAAAAAAAAAAAAAAAAAA"],
    ["a key of the wrong length", "Bearer short"],
    ["another scheme", "Basic dXNlcjpwYXNz"],
    ["the scheme alone", "Bearer"],
    ["an empty header", ""],
  ] as const) {
    it(`401 Invalid API key for ${name}`, async () => {
      const res = await server.request("POST", customersPath(tenant.store.id), { body: customer("a2"), headers: { Authorization: header } });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: "Invalid API key", code: "invalid_api_key" });
    });
  }

  it("takes the scheme in any case but the token exactly", async () => {
    const lower = await server.request("POST", customersPath(tenant.store.id), { body: customer("a3"), headers: { Authorization: `bearer ${tenant.key}` } });
    expect(lower.status).toBe(201);
    const padded = await server.request("POST", customersPath(tenant.store.id), { body: customer("a3"), headers: { Authorization: `Bearer  ${tenant.key}` } });
    expect(padded.status).toBe(401);
    const changed = await server.request("POST", customersPath(tenant.store.id), { body: customer("a3"), key: tenant.key.toLowerCase() === tenant.key ? tenant.key.toUpperCase() : tenant.key.toLowerCase() });
    expect(changed.status).toBe(401);
  });

  it("401 Invalid API key for a deleted key, from the very next request", async () => {
    const key = await tenants.createApiKey(server.db, { team_id: tenant.team.id, name: "short-lived" });
    expect((await server.request("POST", customersPath(tenant.store.id), { key: key.key, body: customer("a4") })).status).toBe(201);
    await tenants.deleteApiKey(server.db, key.id);
    const res = await server.request("POST", customersPath(tenant.store.id), { key: key.key, body: customer("a4") });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: "Invalid API key", code: "invalid_api_key" });
  });

  it("403 for a key of one team on another team's store, and nothing is written", async () => {
    const other = await server.createTenant();
    const before = await customerCount(other.store.id);
    const res = await server.request("POST", customersPath(other.store.id), { key: tenant.key, body: customer("intruder") });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: "API key does not authorize this store", code: "store_not_authorized" });
    expect(await customerCount(other.store.id)).toBe(before);
    const erase = await server.request("DELETE", `${customersPath(other.store.id)}/intruder`, { key: tenant.key });
    expect(erase.status).toBe(403);
  });

  it("a store-restricted key works on its store and is 403 on another store of its team", async () => {
    const second = await tenants.createStore(server.db, { team_id: tenant.team.id, name: "Second", country: "US" });
    const restricted = await tenants.createApiKey(server.db, { team_id: tenant.team.id, name: "one store", store_id: tenant.store.id });
    expect((await server.request("POST", customersPath(tenant.store.id), { key: restricted.key, body: customer("r1") })).status).toBe(201);
    const before = await customerCount(second.id);
    const res = await server.request("POST", customersPath(second.id), { key: restricted.key, body: customer("r1") });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: "API key does not authorize this store", code: "store_not_authorized" });
    expect(await customerCount(second.id)).toBe(before);
    expect((await server.request("POST", customersPath(second.id), { key: tenant.key, body: customer("r1") })).status).toBe(201);
  });

  for (const storeId of ["999999999", "0", "-1", "abc", "1.5", "99999999999999999999", "1e3"]) {
    it(`404 Store not found or paused for store id ${storeId}`, async () => {
      const res = await server.request("POST", customersPath(storeId), { key: tenant.key, body: customer("n1") });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: "Store not found or paused", code: "store_not_found" });
    });
  }

  it("404 for a paused store of the key's team, and nothing is written; resuming restores access", async () => {
    const paused = await server.createTenant({ paused: true });
    const res = await server.request("POST", customersPath(paused.store.id), { key: paused.key, body: customer("p1") });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: "Store not found or paused", code: "store_not_found" });
    expect(await customerCount(paused.store.id)).toBe(0);
    await tenants.updateStore(server.db, paused.store.id, { paused: false });
    expect((await server.request("POST", customersPath(paused.store.id), { key: paused.key, body: customer("p1") })).status).toBe(201);
  });

  it("403, not 404, for another team's paused store", async () => {
    const paused = await server.createTenant({ paused: true });
    const res = await server.request("POST", customersPath(paused.store.id), { key: tenant.key, body: customer("p2") });
    expect(res.status).toBe(403);
  });
});

describe("the contract's order of checks", () => {
  it("authentication comes before the store and the body", async () => {
    const res = await server.request("POST", customersPath("abc"), { rawBody: "{not json", contentType: "text/plain" });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: "API key is missing", code: "api_key_missing" });
  });

  it("store authorization comes before the body", async () => {
    const other = await server.createTenant();
    const forbidden = await server.request("POST", customersPath(other.store.id), { key: tenant.key, rawBody: "{not json" });
    expect(forbidden.status).toBe(403);
    const unknown = await server.request("POST", customersPath(999999), { key: tenant.key, rawBody: "[]", contentType: "text/plain" });
    expect(unknown.status).toBe(404);
  });

  it("the body comes after authorization: 415, then 400, then 422", async () => {
    const path = customersPath(tenant.store.id);
    const wrongType = await server.request("POST", path, { key: tenant.key, rawBody: JSON.stringify(customer("o1")), contentType: "text/plain" });
    expect(wrongType.status).toBe(415);
    expect(wrongType.body).toEqual({ error: "Content-Type must be application/json", code: "unsupported_media_type" });
    const noType = await server.request("POST", path, { key: tenant.key, rawBody: JSON.stringify(customer("o1")), contentType: null });
    expect(noType.status).toBe(415);
    const malformed = await server.request("POST", path, { key: tenant.key, rawBody: '{"phone": ' });
    expect(malformed.status).toBe(400);
    expect(malformed.body).toEqual({ error: "Malformed JSON body", code: "malformed_json" });
    const empty = await server.request("POST", path, { key: tenant.key, rawBody: "" , contentType: "application/json" });
    expect(empty.status).toBe(400);
    const array = await server.request("POST", path, { key: tenant.key, rawBody: "[]" });
    expect(array.status).toBe(422);
    expect(array.body.error).toBe("Invalid request body");
    const withCharset = await server.request("POST", path, { key: tenant.key, body: customer("o2"), contentType: "application/json; charset=utf-8" });
    expect(withCharset.status).toBe(201);
  });
});

describe("rate limiting", () => {
  it("every authenticated answer says where the key stands: RateLimit-Limit, -Remaining, -Reset", async () => {
    const limited = await startTestServer({ rateLimit: { requests: 3, windowSeconds: 60 }, database: server.handle });
    try {
      const key = (await tenants.createApiKey(server.db, { team_id: tenant.team.id, name: "headers" })).key;
      const path = customersPath(tenant.store.id);
      const first = await limited.request("POST", path, { key, body: customer("rlh") });
      expect([first.headers.get("ratelimit-limit"), first.headers.get("ratelimit-remaining")]).toEqual(["3", "2"]);
      expect(Number(first.headers.get("ratelimit-reset"))).toBeGreaterThan(0);
      expect(Number(first.headers.get("ratelimit-reset"))).toBeLessThanOrEqual(60);
      const invalid = await limited.request("POST", path, { key, body: {} });
      expect(invalid.status).toBe(422);
      expect(invalid.headers.get("ratelimit-remaining")).toBe("1");
      await limited.request("POST", path, { key, body: customer("rlh") });
      const refused = await limited.request("POST", path, { key, body: customer("rlh") });
      expect(refused.status).toBe(429);
      expect(refused.headers.get("ratelimit-remaining")).toBe("0");
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      // Without a key nothing is told.
      expect((await limited.request("POST", path, { body: customer("rlh") })).headers.get("ratelimit-limit")).toBeNull();
    } finally {
      await limited.close();
    }
  });

  it("429 Rate limit exceeded with Retry-After once a key spends its budget; other keys are unaffected", async () => {
    const limited = await startTestServer({ rateLimit: { requests: 3, windowSeconds: 60 }, database: server.handle });
    try {
      const path = customersPath(tenant.store.id);
      const statuses = [];
      for (let i = 0; i < 4; i++) statuses.push((await limited.request("POST", path, { key: tenant.key, body: customer("rl") })).status);
      expect(statuses.slice(0, 3).every((status) => status === 200 || status === 201)).toBe(true);
      const res = await limited.request("POST", path, { key: tenant.key, body: customer("rl") });
      expect(res.status).toBe(429);
      expect(res.body).toEqual({ error: "Rate limit exceeded", code: "rate_limited" });
      expect(Number(res.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      const other = await tenants.createApiKey(server.db, { team_id: tenant.team.id, name: "fresh budget" });
      expect((await limited.request("POST", path, { key: other.key, body: customer("rl") })).status).toBe(200);
    } finally {
      await limited.close();
    }
  });
});
