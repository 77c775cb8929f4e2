import { describe, expect, it } from "vitest";
import { withTestServer, type TestServer, type TestTenant, uid } from "../../test/helpers.js";

let server: TestServer;
let tenant: TestTenant;
withTestServer((started, created) => ([server, tenant] = [started, created]));

const strict = { Prefer: "handling=strict" };
const order = (id: string) => ({ external_id: id, placed_at: "2026-11-22T10:00:00Z", total_price: 10, customer: { phone: "+14155552671" } });

describe("fields the API does not know", () => {
  it("are ignored and named in X-Ignored-Fields by default", async () => {
    const id = uid("order");
    await server.request("POST", `/api/v1/stores/${tenant.store.id}/orders`, { key: tenant.key, body: order(id) });
    const typo = await server.request("PATCH", `/api/v1/stores/${tenant.store.id}/orders/${id}`, { key: tenant.key, body: { financial_staus: "refunded" } });
    expect(typo.status).toBe(200);
    expect(typo.headers.get("x-ignored-fields")).toBe("financial_staus");
    expect(typo.headers.get("preference-applied")).toBeNull();
    const checkout = await server.request("POST", `/api/v1/stores/${tenant.store.id}/checkouts`, {
      key: tenant.key,
      body: { external_id: uid("checkout"), abandoned_at: "2026-11-22T09:00:00Z", total_price: 5, status: "active", customer: { phone: "+14155552672", nmae: "Ada" } },
    });
    expect(checkout.status).toBe(201);
    expect(checkout.body.status).toBe("abandoned");
    expect(checkout.headers.get("x-ignored-fields")).toBe("status, customer.nmae");
    const clean = await server.request("POST", `/api/v1/stores/${tenant.store.id}/orders`, { key: tenant.key, body: order(uid("order")) });
    expect(clean.headers.get("x-ignored-fields")).toBeNull();
  });

  it("are refused with Prefer: handling=strict: one 422 naming each, nothing written", async () => {
    const id = uid("order");
    const refused = await server.request("POST", `/api/v1/stores/${tenant.store.id}/orders`, { key: tenant.key, body: { ...order(id), store_id: 9, customer: { phone: "+14155552671", lifetime_vaule: 5 } }, headers: strict });
    expect(refused.status).toBe(422);
    expect(refused.headers.get("preference-applied")).toBe("handling=strict");
    expect(refused.body).toEqual({
      error: "Invalid request body",
      code: "validation_failed",
      details: [
        { path: "customer.lifetime_vaule", message: "unknown field" },
        { path: "store_id", message: "unknown field" },
      ],
    });
    expect(await server.db.selectFrom("orders").select("id").where("external_id", "=", id).execute()).toEqual([]);
    const accepted = await server.request("POST", `/api/v1/stores/${tenant.store.id}/orders`, { key: tenant.key, body: { ...order(id), metadata: { free: { form: true } } }, headers: { Prefer: "return=minimal, handling=strict" } });
    expect(accepted.status).toBe(201);
    expect(accepted.headers.get("preference-applied")).toBe("handling=strict");
  });

  it("are refused in strict mode on every write endpoint, read-only fields included", async () => {
    const store = `/api/v1/stores/${tenant.store.id}`;
    const orderId = uid("order");
    await server.request("POST", `${store}/orders`, { key: tenant.key, body: order(orderId) });
    const writes: Array<[string, string, Record<string, unknown>]> = [
      ["POST", `${store}/customers`, { phone: "+14155552673", id: 1 }],
      ["POST", `${store}/orders`, { ...order(uid("order")), created_at: "2026-11-22T10:00:00Z" }],
      ["PATCH", `${store}/orders/${orderId}`, { financial_status: "refunded", updated_at: "2026-11-22T10:00:00Z" }],
      ["POST", `${store}/checkouts`, { external_id: uid("checkout"), abandoned_at: "2026-11-22T09:00:00Z", total_price: 5, customer: { phone: "+14155552674" }, status: "abandoned" }],
      ["POST", `${store}/shipments`, { external_id: uid("shipment"), order_external_id: orderId, status: "in_transit", order_id: 1 }],
    ];
    for (const [method, path, body] of writes) {
      const refused = await server.request(method, path, { key: tenant.key, body, headers: strict });
      const extra = Object.keys(body).at(-1);
      expect({ method, path, status: refused.status, body: refused.body }).toEqual({
        method,
        path,
        status: 422,
        body: { error: "Invalid request body", code: "validation_failed", details: [{ path: extra, message: "unknown field" }] },
      });
    }
    const unchanged = await server.request("GET", `${store}/orders/${orderId}`, { key: tenant.key });
    expect(unchanged.body.financial_status).not.toBe("refunded");
  });

  it("include the names objects carry by default: __proto__, constructor and prototype are named, and refused in strict mode", async () => {
    const store = `/api/v1/stores/${tenant.store.id}`;
    const id = uid("order");
    // Written as text: a JavaScript object literal would take `__proto__` for its prototype, not a field.
    const body = JSON.stringify(order(id)).replace(/^\{/, '{"__proto__":{"admin":true},"constructor":{"x":1},"prototype":1,').replace('"customer":{', '"customer":{"constructor":"c",');
    const lenient = await server.request("POST", `${store}/orders`, { key: tenant.key, rawBody: body });
    expect(lenient.status).toBe(201);
    expect(lenient.headers.get("x-ignored-fields")).toBe("__proto__, constructor, prototype, customer.constructor");
    const refused = await server.request("POST", `${store}/orders`, { key: tenant.key, rawBody: body.replace(id, uid("order")), headers: strict });
    expect(refused.status).toBe(422);
    expect(refused.body).toEqual({
      error: "Invalid request body",
      code: "validation_failed",
      details: ["__proto__", "constructor", "prototype", "customer.constructor"].map((path) => ({ path, message: "unknown field" })),
    });
    // Nothing of them is stored.
    const stored = await server.request("GET", `${store}/orders/${id}`, { key: tenant.key });
    expect(JSON.stringify(stored.body)).not.toMatch(/admin|constructor|prototype/);
  });
});
