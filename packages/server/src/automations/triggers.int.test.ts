import { describe, expect, it } from "vitest";
import { checkout, jobsFor, messagesFor, newPhone, order, patch, push, server, settled, tenant, withAutomationServer } from "../../test/automations.js";
import { refuseInserts, uid } from "../../test/helpers.js";

withAutomationServer();

describe("backfill", () => {
  it("stores a push marked X-Backfill: true and triggers nothing", async () => {
    const phone = newPhone();
    const customerId = uid("hist");
    const o = order(phone, { customer: { external_id: customerId, phone } });
    const headers = { "X-Backfill": "true" };
    const stored = await push("orders", o, tenant, headers);
    expect(stored.status).toBe(201);
    expect(stored.headers.get("x-backfill")).toBe("true");
    expect((await push("orders", order(phone))).headers.get("x-backfill")).toBeNull();
    const c = checkout(phone);
    expect((await push("checkouts", c, tenant, headers)).status).toBe(201);
    expect((await push("shipments", { external_id: uid("ship"), order_external_id: o.external_id, status: "delivered" }, tenant, headers)).status).toBe(201);
    const jobs = await server.db
      .selectFrom("automation_jobs")
      .select("id")
      .where("record_external_id", "in", [o.external_id, c.external_id, customerId])
      .execute();
    expect(jobs).toHaveLength(0);
    expect(await server.db.selectFrom("orders").select("id").where("external_id", "=", o.external_id).execute()).toHaveLength(1);
  });
});

describe("backfilled records fire only what a later write changes", () => {
  const backfill = { "X-Backfill": "true" };

  it("a backfilled checkout schedules no recovery when its tags are patched or it is pushed again unchanged", async () => {
    const body = checkout(newPhone());
    expect((await push("checkouts", body, tenant, backfill)).status).toBe(201);
    expect((await patch("checkouts", body.external_id, { tags: ["seen"] })).status).toBe(200);
    expect((await patch("checkouts", body.external_id, { status: "abandoned" })).status).toBe(200);
    expect((await push("checkouts", body)).status).toBe(200);
    await settled();
    expect(await jobsFor("checkout_recovery", body.external_id)).toHaveLength(0);
    expect(await messagesFor("checkout_recovery", body.external_id)).toHaveLength(0);
  });

  it("a backfilled checkout that later enters abandoned again gets exactly one recovery", async () => {
    const body = checkout(newPhone());
    await push("checkouts", body, tenant, backfill);
    await patch("checkouts", body.external_id, { status: "active" });
    expect(await jobsFor("checkout_recovery", body.external_id)).toHaveLength(0);
    expect((await push("checkouts", body)).status).toBe(200);
    await push("checkouts", body);
    await settled();
    expect(await messagesFor("checkout_recovery", body.external_id)).toHaveLength(1);
  });

  it("a backfilled shipment pushed again with the same status notifies nobody; a new status notifies once", async () => {
    const o = order(newPhone());
    await push("orders", o, tenant, backfill);
    const shipment = { external_id: uid("ship"), order_external_id: o.external_id, status: "in_transit" };
    expect((await push("shipments", shipment, tenant, backfill)).status).toBe(201);
    expect((await push("shipments", shipment)).status).toBe(200);
    expect((await push("shipments", { ...shipment, carrier: "UPS" })).status).toBe(200);
    await settled();
    expect(await jobsFor("shipping_notification", shipment.external_id)).toHaveLength(0);
    await push("shipments", { ...shipment, status: "delivered" });
    await settled();
    const messages = await messagesFor("shipping_notification", shipment.external_id);
    expect(messages.map((m) => (m.content as { shipment: { status: string } }).shipment.status)).toEqual(["delivered"]);
  });

  it("a backfilled customer pushed again unchanged syncs nothing; a change syncs once", async () => {
    const id = uid("hist-customer");
    const body = { external_id: id, phone: newPhone(), first_name: "Lin" };
    await push("customers", body, tenant, backfill);
    expect((await push("customers", body)).status).toBe(200);
    await push("orders", order(body.phone, { customer: body }));
    await settled();
    expect(await jobsFor("contact_sync", id)).toHaveLength(0);
    await push("customers", { ...body, first_name: "Lina" });
    await settled();
    expect(await messagesFor("contact_sync", id)).toHaveLength(1);
  });
});

describe("one transaction with the write", () => {
  it("a push that fails leaves no automation behind", async () => {
    const restore = await refuseInserts(server.db, "orders", "nope-");
    try {
      const id = uid("never");
      const res = await push("orders", order(newPhone(), { external_id: uid("nope"), customer: { external_id: id, phone: newPhone() } }));
      expect(res.status).toBe(500);
      expect(await jobsFor("contact_sync", id)).toHaveLength(0);
    } finally {
      await restore();
    }
  });
});
