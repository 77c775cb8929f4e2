import { describe, expect, it } from "vitest";
import { base, count, OFFSET_TIMESTAMP, order, patch, post, server, tenant, uid, withRecordsServer } from "../../../test/records.js";

withRecordsServer();

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
