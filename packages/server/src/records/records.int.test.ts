import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { refuseInserts, startTestServer, type TestServer } from "../../test/helpers.js";

let server: TestServer;
let tenant: Awaited<ReturnType<TestServer["createTenant"]>>;

beforeAll(async () => {
  server = await startTestServer();
  tenant = await server.createTenant({ country: "US" });
});
afterAll(() => server?.close());

let seq = 0;
const uid = (prefix: string) => `${prefix}-${Date.now()}-${++seq}`;
const base = (storeId = tenant.store.id) => `/api/v1/stores/${storeId}`;
const OFFSET_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}[+-]\d{2}:\d{2}$/;

const order = (fields: Record<string, unknown> = {}) => ({
  external_id: uid("order"),
  placed_at: "2026-11-22T09:30:00+01:00",
  total_price: 25,
  customer: { phone: "+14155552671" },
  ...fields,
});
const checkout = (fields: Record<string, unknown> = {}) => ({
  external_id: uid("checkout"),
  abandoned_at: "2026-11-22T09:30:00Z",
  total_price: 80,
  customer: { phone: "+14155552671" },
  ...fields,
});

const post = (resource: string, body: unknown, key = tenant.key, storeId = tenant.store.id) =>
  server.request("POST", `${base(storeId)}/${resource}`, { key, body });
const patch = (resource: string, externalId: string, body: unknown, key = tenant.key, storeId = tenant.store.id) =>
  server.request("PATCH", `${base(storeId)}/${resource}/${encodeURIComponent(externalId)}`, { key, body });

async function count(table: "orders" | "checkouts" | "shipments" | "customers", externalId: string) {
  const rows = await server.db.selectFrom(table).select("id").where("external_id", "=", externalId).execute();
  return rows.length;
}

describe("orders", () => {
  it("creates with 201 and exactly the documented response fields, then 200 with created_at unchanged", async () => {
    const body = order({ currency: "eur", financial_status: "paid", tags: ["gift"] });
    const first = await post("orders", body);
    expect(first.status).toBe(201);
    expect(first.body).toEqual({
      external_id: body.external_id,
      store_id: tenant.store.id,
      total_price: "25.00",
      currency: "EUR",
      financial_status: "paid",
      fulfillment_status: null,
      tags: ["gift"],
      created_at: expect.stringMatching(OFFSET_TIMESTAMP),
    });
    const second = await post("orders", { ...body, total_price: 30 });
    expect(second.status).toBe(200);
    expect(second.body.total_price).toBe("30.00");
    expect(second.body.created_at).toBe(first.body.created_at);
    expect(await count("orders", body.external_id)).toBe(1);
  });

  it("answers null statuses and [] tags when never set", async () => {
    const res = await post("orders", order());
    expect(res.body).toMatchObject({ currency: null, financial_status: null, fulfillment_status: null, tags: [] });
  });

  it.each([
    [0, "0.00"],
    [1.005, "1.01"],
    [19.999, "20.00"],
    [0.1 + 0.2, "0.30"],
    [1234567.891, "1234567.89"],
    [999999999999.99, "999999999999.99"],
  ])("rounds total_price %s half-up in decimal to %s", async (price, expected) => {
    const res = await post("orders", order({ total_price: price }));
    expect(res.status).toBe(201);
    expect(res.body.total_price).toBe(expected);
    const [row] = await server.db.selectFrom("orders").select("total_price").where("external_id", "=", res.body.external_id).execute();
    expect(row?.total_price).toBe(expected);
  });

  it("merges on re-push: absent fields keep, present replace, null clears", async () => {
    const body = order({ currency: "usd", financial_status: "pending", fulfillment_status: "unfulfilled", tags: ["a"], metadata: { a: 1 }, line_items: [{ sku: "1" }] });
    await post("orders", body);
    const kept = await post("orders", { external_id: body.external_id, placed_at: body.placed_at, total_price: 25, customer: body.customer });
    expect(kept.body).toMatchObject({ currency: "USD", financial_status: "pending", fulfillment_status: "unfulfilled", tags: ["a"] });
    const cleared = await post("orders", { ...body, currency: null, financial_status: null, fulfillment_status: null, tags: null, metadata: null, line_items: null });
    expect(cleared.body).toMatchObject({ currency: null, financial_status: null, fulfillment_status: null, tags: [] });
    const [row] = await server.db.selectFrom("orders").selectAll().where("external_id", "=", body.external_id).execute();
    expect(row).toMatchObject({ metadata: null, line_items: null, currency: null });
  });

  it("stores line_items and metadata as sent", async () => {
    const body = order({ line_items: [{ sku: "A-1", qty: 2, price: 9.99 }], metadata: { source: "pos", nested: { ok: true } } });
    await post("orders", body);
    const [row] = await server.db.selectFrom("orders").selectAll().where("external_id", "=", body.external_id).execute();
    expect(row?.line_items).toEqual([{ sku: "A-1", qty: 2, price: 9.99 }]);
    expect(row?.metadata).toEqual({ source: "pos", nested: { ok: true } });
  });

  it("keeps placed_at as the instant sent, whatever its offset", async () => {
    const body = order({ placed_at: "2026-11-22T09:30:00.250-05:00" });
    await post("orders", body);
    const [row] = await server.db.selectFrom("orders").select("placed_at").where("external_id", "=", body.external_id).execute();
    expect(row?.placed_at.toISOString()).toBe("2026-11-22T14:30:00.250Z");
  });

  it("upserts the embedded customer, links it, and applies lifetime_value and orders_count", async () => {
    const customerId = uid("cust");
    const body = order({ customer: { external_id: customerId, phone: "415 555 0111", first_name: "Lin", lifetime_value: 4200, orders_count: 7 } });
    expect((await post("orders", body)).status).toBe(201);
    const [customer] = await server.db.selectFrom("customers").selectAll().where("external_id", "=", customerId).execute();
    expect(customer).toMatchObject({ phone: "+14155550111", first_name: "Lin", lifetime_value: 4200, orders_count: 7 });
    const [row] = await server.db.selectFrom("orders").select("customer_id").where("external_id", "=", body.external_id).execute();
    expect(row?.customer_id).toBe(customer?.id);
    const again = await post("customers", { external_id: customerId, phone: "+14155550111" });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ first_name: "Lin", lifetime_value: 4200, orders_count: 7 });
  });

  it("keys an embedded customer without external_id by its E.164 phone", async () => {
    await post("orders", order({ customer: { phone: "(415) 555-0122", first_name: "Kim" } }));
    const res = await post("customers", { phone: "+14155550122" });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ external_id: "+14155550122", first_name: "Kim" });
  });

  it("names the embedded customer's phone with every other failing field", async () => {
    const res = await post("orders", order({ total_price: -1, customer: { phone: "12", email: "x" } }));
    expect(res.status).toBe(422);
    expect(res.body.details.map((d: { path: string }) => d.path).sort()).toEqual(["customer.email", "customer.phone", "total_price"]);
  });

  it("names the embedded customer's phone problem on customer.phone and writes nothing", async () => {
    const body = order({ customer: { phone: "+1 555 000 0000" } });
    const res = await post("orders", body);
    expect(res.status).toBe(422);
    expect(res.body.details).toEqual([{ path: "customer.phone", message: expect.any(String) }]);
    expect(await count("orders", body.external_id)).toBe(0);
  });

  describe("PATCH", () => {
    it("changes each field alone and leaves the others", async () => {
      const body = order({ financial_status: "pending", fulfillment_status: "unfulfilled", tags: ["a"], metadata: { m: 1 } });
      const created = await post("orders", body);
      const paid = await patch("orders", body.external_id, { financial_status: "paid" });
      expect(paid.status).toBe(200);
      expect(paid.body).toEqual({ ...created.body, financial_status: "paid" });
      const fulfilled = await patch("orders", body.external_id, { fulfillment_status: "fulfilled" });
      expect(fulfilled.body).toMatchObject({ financial_status: "paid", fulfillment_status: "fulfilled", tags: ["a"] });
      const retagged = await patch("orders", body.external_id, { tags: ["x", "y", "x"] });
      expect(retagged.body.tags).toEqual(["x", "y"]);
      const meta = await patch("orders", body.external_id, { metadata: { m: 2 } });
      expect(meta.status).toBe(200);
      const [row] = await server.db.selectFrom("orders").selectAll().where("external_id", "=", body.external_id).execute();
      expect(row?.metadata).toEqual({ m: 2 });
      const cleared = await patch("orders", body.external_id, { financial_status: null, tags: null });
      expect(cleared.body).toMatchObject({ financial_status: null, fulfillment_status: "fulfilled", tags: [] });
      expect(cleared.body.created_at).toBe(created.body.created_at);
    });

    it("an empty body returns 200 and the order unchanged", async () => {
      const body = order({ financial_status: "paid" });
      const created = await post("orders", body);
      const res = await patch("orders", body.external_id, {});
      expect(res.status).toBe(200);
      expect(res.body).toEqual(created.body);
    });

    it("404 Order not found for an unknown order", async () => {
      const res = await patch("orders", uid("missing"), { financial_status: "paid" });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: "Order not found", code: "order_not_found" });
    });

    it("ignores fields PATCH does not take", async () => {
      const body = order();
      await post("orders", body);
      const res = await patch("orders", body.external_id, { total_price: 999, currency: "JPY" });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ total_price: "25.00", currency: null });
    });

    it("answers 404 for an id no record can have (a NUL character)", async () => {
      const orderRes = await server.request("PATCH", `${base()}/orders/a%00b`, { key: tenant.key, body: { financial_status: "paid" } });
      expect(orderRes.status).toBe(404);
      expect(orderRes.body).toEqual({ error: "Order not found", code: "order_not_found" });
      const checkoutRes = await server.request("PATCH", `${base()}/checkouts/a%00b`, { key: tenant.key, body: { status: "expired" } });
      expect(checkoutRes.body).toEqual({ error: "Checkout not found", code: "checkout_not_found" });
      expect((await server.request("DELETE", `${base()}/customers/a%00b`, { key: tenant.key })).status).toBe(204);
    });

    it.each(["a/b", "with space", "q?x=1", "hash#tag", "100%", "plus+sign", "ünïcödé-注文", "dot.", "~tilde", "semi;colon"])(
      "round-trips the external id %j through POST and PATCH",
      async (externalId) => {
        const id = `${externalId}-${uid("x")}`;
        expect((await post("orders", order({ external_id: id }))).status).toBe(201);
        const res = await patch("orders", id, { fulfillment_status: "fulfilled" });
        expect(res.status).toBe(200);
        expect(res.body.external_id).toBe(id);
      },
    );
  });
});

describe("checkouts", () => {
  it("creates abandoned with 201 and exactly the documented fields, then 200 with created_at unchanged", async () => {
    const body = checkout({ currency: "gbp", recovery_url: "https://shop.example/recover/abc", tags: ["cart"] });
    const first = await post("checkouts", body);
    expect(first.status).toBe(201);
    expect(first.body).toEqual({
      external_id: body.external_id,
      store_id: tenant.store.id,
      status: "abandoned",
      total_price: "80.00",
      currency: "GBP",
      recovery_url: "https://shop.example/recover/abc",
      tags: ["cart"],
      created_at: expect.stringMatching(OFFSET_TIMESTAMP),
    });
    const second = await post("checkouts", body);
    expect(second.status).toBe(200);
    expect(second.body.created_at).toBe(first.body.created_at);
    expect(await count("checkouts", body.external_id)).toBe(1);
  });

  it("answers null and [] for what was never set", async () => {
    const res = await post("checkouts", checkout());
    expect(res.body).toMatchObject({ currency: null, recovery_url: null, tags: [] });
  });

  it.each([
    ["active", "abandoned"],
    ["abandoned", "abandoned"],
    ["recovered", "recovered"],
    ["completed", "completed"],
    ["expired", "expired"],
  ])("a re-upsert of a %s checkout leaves it %s", async (state, expected) => {
    const body = checkout();
    await post("checkouts", body);
    expect((await patch("checkouts", body.external_id, { status: state })).body.status).toBe(state);
    const res = await post("checkouts", body);
    expect(res.status).toBe(200);
    expect(res.body.status).toBe(expected);
  });

  it.each(["active", "abandoned", "recovered", "completed", "expired"])("PATCH sets status %s", async (state) => {
    const body = checkout();
    await post("checkouts", body);
    await patch("checkouts", body.external_id, { status: state === "recovered" ? "completed" : "recovered" });
    const res = await patch("checkouts", body.external_id, { status: state });
    expect(res.status).toBe(200);
    expect(res.body.status).toBe(state);
  });

  it("PATCH takes each field alone, null clears, an empty body changes nothing", async () => {
    const body = checkout({ recovery_url: "https://shop.example/r/1", tags: ["a"], metadata: { a: 1 } });
    const created = await post("checkouts", body);
    expect((await patch("checkouts", body.external_id, {})).body).toEqual(created.body);
    const url = await patch("checkouts", body.external_id, { recovery_url: "https://shop.example/r/2" });
    expect(url.body).toMatchObject({ recovery_url: "https://shop.example/r/2", status: "abandoned", tags: ["a"] });
    const tags = await patch("checkouts", body.external_id, { tags: ["b"] });
    expect(tags.body.tags).toEqual(["b"]);
    const meta = await patch("checkouts", body.external_id, { metadata: { b: 2 } });
    expect(meta.status).toBe(200);
    const cleared = await patch("checkouts", body.external_id, { recovery_url: null, tags: null, metadata: null });
    expect(cleared.body).toMatchObject({ recovery_url: null, tags: [] });
    const [row] = await server.db.selectFrom("checkouts").selectAll().where("external_id", "=", body.external_id).execute();
    expect(row?.metadata).toBeNull();
  });

  it("PATCH refuses a status outside the five", async () => {
    const body = checkout();
    await post("checkouts", body);
    const res = await patch("checkouts", body.external_id, { status: "lost" });
    expect(res.status).toBe(422);
    expect(res.body.details).toEqual([{ path: "status", message: "must be one of: active, abandoned, recovered, completed, expired" }]);
  });

  it("404 Checkout not found for an unknown checkout", async () => {
    const res = await patch("checkouts", uid("missing"), { status: "recovered" });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: "Checkout not found", code: "checkout_not_found" });
  });

  it("drops lifetime_value from a checkout's customer", async () => {
    const customerId = uid("ck-cust");
    await post("checkouts", checkout({ customer: { external_id: customerId, phone: "+14155552671", lifetime_value: 77 } }));
    const [row] = await server.db.selectFrom("customers").selectAll().where("external_id", "=", customerId).execute();
    expect(row?.lifetime_value).toBe(0);
  });
});

describe("shipments", () => {
  it("links to the store's order with 201, returns exactly the documented fields, and changes on re-post with 200", async () => {
    const o = await post("orders", order());
    const [orderRow] = await server.db.selectFrom("orders").select("id").where("external_id", "=", o.body.external_id).execute();
    const body = { external_id: uid("ship"), order_external_id: o.body.external_id, tracking_number: "1Z999", tracking_url: "https://track.example/1Z999", carrier: "UPS", status: "pending" };
    const first = await post("shipments", body);
    expect(first.status).toBe(201);
    expect(first.body).toEqual({
      external_id: body.external_id,
      store_id: tenant.store.id,
      order_id: orderRow?.id,
      tracking_number: "1Z999",
      tracking_url: "https://track.example/1Z999",
      carrier: "UPS",
      status: "pending",
    });
    const moved = await post("shipments", { external_id: body.external_id, order_external_id: body.order_external_id, status: "in_transit" });
    expect(moved.status).toBe(200);
    expect(moved.body).toMatchObject({ status: "in_transit", tracking_number: "1Z999", carrier: "UPS" });
    expect(await count("shipments", body.external_id)).toBe(1);
  });

  it("answers nulls for what was never set", async () => {
    const o = await post("orders", order());
    const res = await post("shipments", { external_id: uid("ship"), order_external_id: o.body.external_id });
    expect(res.body).toMatchObject({ tracking_number: null, tracking_url: null, carrier: null, status: null });
  });

  it("re-links to another order", async () => {
    const a = await post("orders", order());
    const b = await post("orders", order());
    const id = uid("ship");
    const first = await post("shipments", { external_id: id, order_external_id: a.body.external_id });
    const second = await post("shipments", { external_id: id, order_external_id: b.body.external_id });
    expect(second.status).toBe(200);
    expect(second.body.order_id).not.toBe(first.body.order_id);
    const [orderB] = await server.db.selectFrom("orders").select("id").where("external_id", "=", b.body.external_id).execute();
    expect(second.body.order_id).toBe(orderB?.id);
  });

  it("422 Order not found with details when the order does not exist, and no row is written", async () => {
    const id = uid("ship");
    const res = await post("shipments", { external_id: id, order_external_id: uid("nope") });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ error: "Order not found", code: "shipment_order_not_found", details: [{ path: "order_external_id", message: expect.any(String) }] });
    expect(await count("shipments", id)).toBe(0);
  });

  it("refuses a status outside the enum", async () => {
    const o = await post("orders", order());
    const res = await post("shipments", { external_id: uid("ship"), order_external_id: o.body.external_id, status: "lost" });
    expect(res.status).toBe(422);
    expect(res.body.details[0].path).toBe("status");
  });
});

describe("field bounds", () => {
  const long = (n: number) => "x".repeat(n);
  const url = (n: number) => `https://shop.example/${"a".repeat(n - "https://shop.example/".length)}`;
  const meta = (bytes: number) => ({ k: "v".repeat(bytes - '{"k":""}'.length) });
  const items = (n: number) => Array.from({ length: n }, (_, i) => ({ i }));
  const tags = (n: number) => Array.from({ length: n }, (_, i) => `t${i}`);

  type Case = [string, Record<string, unknown>, boolean, string];
  const orderCases: Case[] = [
    ["external_id 255", { external_id: long(255) }, true, "external_id"],
    ["external_id 256", { external_id: long(256) }, false, "external_id"],
    ["external_id empty", { external_id: "" }, false, "external_id"],
    ["placed_at with Z", { placed_at: "2026-11-22T09:30:00Z" }, true, "placed_at"],
    ["placed_at without zone", { placed_at: "2026-11-22T09:30:00" }, false, "placed_at"],
    ["placed_at a date only", { placed_at: "2026-11-22" }, false, "placed_at"],
    ["placed_at Feb 30", { placed_at: "2026-02-30T09:30:00Z" }, false, "placed_at"],
    ["placed_at at +14:00", { placed_at: "2026-11-22T09:30:00+14:00" }, true, "placed_at"],
    ["placed_at at -12:00", { placed_at: "2026-11-22T09:30:00-12:00" }, true, "placed_at"],
    ["placed_at at +16:00", { placed_at: "2026-11-22T09:30:00+16:00" }, false, "placed_at"],
    ["placed_at year 0", { placed_at: "0000-01-01T00:00:00Z" }, false, "placed_at"],
    ["placed_at missing", { placed_at: undefined }, false, "placed_at"],
    ["total_price 0", { total_price: 0 }, true, "total_price"],
    ["total_price at the cap", { total_price: 999999999999.99 }, true, "total_price"],
    ["total_price over the cap", { total_price: 1000000000000 }, false, "total_price"],
    ["total_price negative", { total_price: -0.01 }, false, "total_price"],
    ["total_price as a string", { total_price: "25.00" }, false, "total_price"],
    ["total_price null", { total_price: null }, false, "total_price"],
    ["currency 3 letters", { currency: "jpy" }, true, "currency"],
    ["currency 4 letters", { currency: "EURO" }, false, "currency"],
    ["currency 2 letters", { currency: "EU" }, false, "currency"],
    ["currency with a digit", { currency: "US1" }, false, "currency"],
    ["financial_status 64", { financial_status: long(64) }, true, "financial_status"],
    ["financial_status 65", { financial_status: long(65) }, false, "financial_status"],
    ["fulfillment_status 64", { fulfillment_status: long(64) }, true, "fulfillment_status"],
    ["fulfillment_status 65", { fulfillment_status: long(65) }, false, "fulfillment_status"],
    ["customer missing", { customer: undefined }, false, "customer"],
    ["customer.phone missing", { customer: { first_name: "A" } }, false, "customer.phone"],
    ["customer.first_name 256", { customer: { phone: "+14155552671", first_name: long(256) } }, false, "customer.first_name"],
    ["customer.email invalid", { customer: { phone: "+14155552671", email: "nope" } }, false, "customer.email"],
    ["customer.lifetime_value negative", { customer: { phone: "+14155552671", lifetime_value: -1 } }, false, "customer.lifetime_value"],
    ["customer.orders_count fractional", { customer: { phone: "+14155552671", orders_count: 1.5 } }, false, "customer.orders_count"],
    ["1000 line_items", { line_items: items(1000) }, true, "line_items"],
    ["1001 line_items", { line_items: items(1001) }, false, "line_items"],
    ["a line item that is not an object", { line_items: [{ ok: 1 }, "sku"] }, false, "line_items.1"],
    ["250 tags", { tags: tags(250) }, true, "tags"],
    ["251 tags", { tags: tags(251) }, false, "tags"],
    ["a tag of 256", { tags: ["ok", long(256)] }, false, "tags.1"],
    ["metadata of 16 KiB", { metadata: meta(16384) }, true, "metadata"],
    ["metadata over 16 KiB", { metadata: meta(16385) }, false, "metadata"],
    ["metadata an array", { metadata: [1] }, false, "metadata"],
    ["a NUL in metadata", { metadata: { note: "a\u0000b" } }, false, "metadata.note"],
    ["a lone surrogate in metadata", { metadata: { note: "a\ud800b" } }, false, "metadata.note"],
    ["a lone surrogate in a line item key", { line_items: [{ "k\udc00": 1 }] }, false, "line_items.0"],
    ["a NUL in the external_id", { external_id: "a\u0000b" }, false, "external_id"],
    ["metadata nested too deep", { metadata: JSON.parse(`${'{"a":'.repeat(40)}1${"}".repeat(40)}`) }, false, "metadata"],
  ];

  for (const [name, fields, accepted, path] of orderCases) {
    it(`order: ${accepted ? "accepts" : "refuses"} ${name}`, async () => {
      const body = order(fields);
      const res = await post("orders", body);
      if (accepted) {
        expect(res.status).toBe(201);
        return;
      }
      expect(res.status).toBe(422);
      expect(res.body.error).toBe("Invalid request body");
      expect(res.body.details.map((detail: { path: string }) => detail.path)).toEqual(expect.arrayContaining([expect.stringMatching(new RegExp(`^${path.replace(".", "\\.")}`))]));
      // (An id with a NUL could not even be looked up: no row can have it.)
      if (typeof body.external_id === "string" && !body.external_id.includes("\u0000")) expect(await count("orders", body.external_id)).toBe(0);
    });
  }

  const checkoutCases: Case[] = [
    ["recovery_url of 1024", { recovery_url: url(1024) }, true, "recovery_url"],
    ["recovery_url of 1025", { recovery_url: url(1025) }, false, "recovery_url"],
    ["recovery_url not a URL", { recovery_url: "shop.example/r" }, false, "recovery_url"],
    ["recovery_url javascript:", { recovery_url: "javascript:alert(1)" }, false, "recovery_url"],
    ["abandoned_at without zone", { abandoned_at: "2026-11-22 09:30" }, false, "abandoned_at"],
    ["total_price over the cap", { total_price: 1e12 }, false, "total_price"],
    ["external_id 256", { external_id: long(256) }, false, "external_id"],
    ["currency 4 letters", { currency: "ABCD" }, false, "currency"],
    ["1001 line_items", { line_items: items(1001) }, false, "line_items"],
    ["251 tags", { tags: tags(251) }, false, "tags"],
    ["metadata over 16 KiB", { metadata: meta(16385) }, false, "metadata"],
    ["customer.locale of 11", { customer: { phone: "+14155552671", locale: long(11) } }, false, "customer.locale"],
  ];

  for (const [name, fields, accepted, path] of checkoutCases) {
    it(`checkout: ${accepted ? "accepts" : "refuses"} ${name}`, async () => {
      const res = await post("checkouts", checkout(fields));
      if (accepted) {
        expect(res.status).toBe(201);
        return;
      }
      expect(res.status).toBe(422);
      expect(res.body.details[0].path).toBe(path);
    });
  }

  it("checkout PATCH: recovery_url at 1024 accepted, 1025 refused", async () => {
    const body = checkout();
    await post("checkouts", body);
    expect((await patch("checkouts", body.external_id, { recovery_url: url(1024) })).status).toBe(200);
    expect((await patch("checkouts", body.external_id, { recovery_url: url(1025) })).status).toBe(422);
  });

  it("order PATCH: statuses at 64 accepted, 65 refused", async () => {
    const body = order();
    await post("orders", body);
    expect((await patch("orders", body.external_id, { financial_status: long(64) })).status).toBe(200);
    const res = await patch("orders", body.external_id, { financial_status: long(65), fulfillment_status: long(65) });
    expect(res.status).toBe(422);
    expect(res.body.details.map((d: { path: string }) => d.path)).toEqual(["financial_status", "fulfillment_status"]);
  });

  const shipmentCases: Case[] = [
    ["tracking_number of 255", { tracking_number: long(255) }, true, "tracking_number"],
    ["tracking_number of 256", { tracking_number: long(256) }, false, "tracking_number"],
    ["carrier of 255", { carrier: long(255) }, true, "carrier"],
    ["carrier of 256", { carrier: long(256) }, false, "carrier"],
    ["tracking_url of 1024", { tracking_url: url(1024) }, true, "tracking_url"],
    ["tracking_url of 1025", { tracking_url: url(1025) }, false, "tracking_url"],
    ["external_id of 256", { external_id: long(256) }, false, "external_id"],
    ["order_external_id of 256", { order_external_id: long(256) }, false, "order_external_id"],
    ["order_external_id missing", { order_external_id: undefined }, false, "order_external_id"],
    ["metadata over 16 KiB", { metadata: meta(16385) }, false, "metadata"],
  ];

  for (const [name, fields, accepted, path] of shipmentCases) {
    it(`shipment: ${accepted ? "accepts" : "refuses"} ${name}`, async () => {
      const o = await post("orders", order());
      const res = await post("shipments", { external_id: uid("ship"), order_external_id: o.body.external_id, ...fields });
      if (accepted) {
        expect(res.status).toBe(201);
        return;
      }
      expect(res.status).toBe(422);
      expect(res.body.details[0].path).toBe(path);
    });
  }
});

describe("isolation between stores and teams", () => {
  it("an order of store A is invisible to store B of the same team and to another team", async () => {
    const sameTeam = await server.db.insertInto("stores").values({ team_id: tenant.team.id, name: "B", country: "US" }).returning("id").executeTakeFirstOrThrow();
    const body = order();
    await post("orders", body);
    expect((await patch("orders", body.external_id, { financial_status: "paid" }, tenant.key, sameTeam.id)).status).toBe(404);
    const ship = await post("shipments", { external_id: uid("ship"), order_external_id: body.external_id }, tenant.key, sameTeam.id);
    expect(ship.status).toBe(422);
    const created = await post("orders", body, tenant.key, sameTeam.id);
    expect(created.status).toBe(201);
    const rows = await server.db.selectFrom("orders").select("store_id").where("external_id", "=", body.external_id).execute();
    expect(rows.map((row) => row.store_id).sort()).toEqual([tenant.store.id, sameTeam.id].sort());

    const other = await server.createTenant();
    expect((await patch("orders", body.external_id, { financial_status: "paid" }, other.key, other.store.id)).status).toBe(404);
    expect((await patch("orders", body.external_id, { financial_status: "paid" }, other.key, tenant.store.id)).status).toBe(403);
  });
});

describe("concurrency", () => {
  it("24 concurrent identical order creates: one 201, 23 200s, one row, no 5xx", async () => {
    const body = order({ customer: { phone: "+14155550177", first_name: "Same" } });
    const responses = await Promise.all(Array.from({ length: 24 }, () => post("orders", body)));
    const statuses = responses.map((res) => res.status).sort();
    expect(statuses.filter((status) => status === 201)).toHaveLength(1);
    expect(statuses.filter((status) => status === 200)).toHaveLength(23);
    expect(await count("orders", body.external_id)).toBe(1);
  });

  it("16 concurrent orders sharing one new customer: one customer row and one contact", async () => {
    const customerId = uid("shared");
    const responses = await Promise.all(
      Array.from({ length: 16 }, () => post("orders", order({ customer: { external_id: customerId, phone: "+14155550188" } }))),
    );
    expect(responses.every((res) => res.status === 201)).toBe(true);
    expect(await count("customers", customerId)).toBe(1);
    const contacts = await server.db.selectFrom("contacts").select("id").where("store_id", "=", tenant.store.id).where("phone", "=", "+14155550188").execute();
    expect(contacts).toHaveLength(1);
  });
});

describe("one request, one transaction", () => {
  it("an order the database refuses after its new customer was written leaves neither behind", async () => {
    // The database fails the order insert, after the customer upsert ran in the same transaction.
    const restore = await refuseInserts(server.db, "orders", "refuse-");
    try {
      const customerId = uid("halfway");
      const body = order({ external_id: uid("refuse"), customer: { external_id: customerId, phone: "+14155550199" } });
      const res = await post("orders", body);
      expect(res.status).toBe(500);
      expect(res.body).toEqual({ error: "Internal server error", code: "internal_error" });
      expect(await count("orders", body.external_id)).toBe(0);
      expect(await count("customers", customerId)).toBe(0);
    } finally {
      await restore();
    }
  });
});
