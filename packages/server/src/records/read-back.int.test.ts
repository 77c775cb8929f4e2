import { describe, expect, it } from "vitest";
import { withTestServer, type TestServer, type TestTenant, uid } from "../../test/helpers.js";

let server: TestServer;
let tenant: TestTenant;
withTestServer((started, created) => ([server, tenant] = [started, created]));

const path = (resource: string, id: string) => `/api/v1/stores/${tenant.store.id}/${resource}/${encodeURIComponent(id)}`;
const get = (resource: string, id: string, key: string | null = tenant.key) => server.request("GET", path(resource, id), { key });
const push = (resource: string, body: unknown) => server.request("POST", `/api/v1/stores/${tenant.store.id}/${resource}`, { key: tenant.key, body });

describe("reading records back", () => {
  it("an order: the published fields, what the shop sent, and its customer's key", async () => {
    const id = uid("order");
    await push("orders", {
      external_id: id,
      placed_at: "2026-11-22T10:00:00+02:00",
      total_price: 1250.5,
      currency: "eur",
      line_items: [{ sku: "MUG-1", quantity: 2 }],
      metadata: { channel: "web" },
      customer: { phone: "(415) 555-2671" },
      source_updated_at: "2026-11-22T10:00:01Z",
    });
    const res = await get("orders", id);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      external_id: id,
      store_id: tenant.store.id,
      total_price: "1250.50",
      currency: "EUR",
      placed_at: "2026-11-22T08:00:00.000+00:00",
      customer_external_id: "+14155552671",
      line_items: [{ sku: "MUG-1", quantity: 2 }],
      metadata: { channel: "web" },
      source_updated_at: "2026-11-22T10:00:01.000+00:00",
    });
    expect(res.body.updated_at).toMatch(/\+00:00$/);
    expect((await get("orders", uid("missing"))).body).toEqual({ error: "Order not found", code: "order_not_found" });
  });

  it("a customer with the E.164 phone it became, by its key or its phone; 404 once erased", async () => {
    const id = uid("customer");
    await push("customers", { external_id: id, phone: "415 555 2672", first_name: "Ada" });
    const res = await get("customers", id);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ external_id: id, phone: "+14155552672", first_name: "Ada", tags: [] });
    await push("customers", { phone: "+14155552679", first_name: "Keyed by phone" });
    expect((await get("customers", "+14155552679")).body).toMatchObject({ external_id: "+14155552679", phone: "+14155552679" });
    await server.request("DELETE", path("customers", id), { key: tenant.key });
    const erased = await get("customers", id);
    expect(erased.status).toBe(404);
    expect(erased.body).toEqual({ error: "Customer not found", code: "customer_not_found" });
  });

  it("a checkout and a shipment, with their links", async () => {
    const o = uid("order");
    await push("orders", { external_id: o, placed_at: "2026-11-22T10:00:00Z", total_price: 5, customer: { external_id: "buyer-1", phone: "+14155552673" } });
    const s = uid("ship");
    await push("shipments", { external_id: s, order_external_id: o, status: "in_transit", carrier: "DHL" });
    expect((await get("shipments", s)).body).toMatchObject({ external_id: s, order_external_id: o, status: "in_transit", carrier: "DHL", metadata: null });
    expect((await get("shipments", uid("none"))).body).toEqual({ error: "Shipment not found", code: "shipment_not_found" });

    const c = uid("checkout");
    await push("checkouts", { external_id: c, abandoned_at: "2026-11-22T09:00:00Z", total_price: 80, customer: { external_id: "buyer-1", phone: "+14155552673" } });
    expect((await get("checkouts", c)).body).toMatchObject({ external_id: c, status: "abandoned", abandoned_at: "2026-11-22T09:00:00.000+00:00", customer_external_id: "buyer-1" });
    expect((await get("checkouts", uid("none"))).body).toEqual({ error: "Checkout not found", code: "checkout_not_found" });
  });

  it("answers with the writes' auth table: no key, a wrong key, another team's store", async () => {
    const id = uid("order");
    await push("orders", { external_id: id, placed_at: "2026-11-22T10:00:00Z", total_price: 5, customer: { phone: "+14155552674" } });
    expect((await get("orders", id, null)).body).toEqual({ error: "API key is missing", code: "api_key_missing" });
    expect((await get("orders", id, "x".repeat(24))).body).toEqual({ error: "Invalid API key", code: "invalid_api_key" });
    const other = await server.createTenant();
    const foreign = await server.request("GET", path("orders", id), { key: other.key });
    expect(foreign.status).toBe(403);
    expect(foreign.body).toEqual({ error: "API key does not authorize this store", code: "store_not_authorized" });
  });
});
