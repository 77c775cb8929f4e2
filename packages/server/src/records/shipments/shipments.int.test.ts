import { describe, expect, it } from "vitest";
import { count, order, post, server, tenant, uid, withRecordsServer } from "../../../test/records.js";

withRecordsServer();

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
