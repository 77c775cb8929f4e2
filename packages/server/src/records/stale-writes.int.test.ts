import { describe, expect, it } from "vitest";
import { withTestServer, type TestServer, type TestTenant, uid } from "../../test/helpers.js";

let server: TestServer;
let tenant: TestTenant;
withTestServer((started, created) => ([server, tenant] = [started, created]));

const T1 = "2026-11-20T10:00:00Z";
const T2 = "2026-11-21T10:00:00+02:00";
const T3 = "2026-11-22T10:00:00Z";
const push = (resource: string, body: unknown) => server.request("POST", `/api/v1/stores/${tenant.store.id}/${resource}`, { key: tenant.key, body });
const patch = (resource: string, id: string, body: unknown) => server.request("PATCH", `/api/v1/stores/${tenant.store.id}/${resource}/${id}`, { key: tenant.key, body });
const jobs = (externalId: string) => server.db.selectFrom("automation_jobs").select(["flow", "payload"]).where("record_external_id", "=", externalId).execute();
const order = (id: string, fields: Record<string, unknown>) => ({ external_id: id, placed_at: "2026-11-20T09:00:00Z", total_price: 10, customer: { phone: "+14155552671" }, ...fields });

describe("a write older than the stored record (source_updated_at)", () => {
  it("is not applied to an order: 200 with the stored order and X-Stale-Write: ignored; a newer one is", async () => {
    const id = uid("order");
    expect((await push("orders", order(id, { total_price: 20, source_updated_at: T2 }))).status).toBe(201);
    const stale = await push("orders", order(id, { total_price: 99, financial_status: "refunded", source_updated_at: T1 }));
    expect(stale.status).toBe(200);
    expect(stale.headers.get("x-stale-write")).toBe("ignored");
    expect(stale.body).toMatchObject({ external_id: id, total_price: "20.00", financial_status: null });
    const newer = await push("orders", order(id, { total_price: 30, source_updated_at: T3 }));
    expect(newer.headers.get("x-stale-write")).toBeNull();
    expect(newer.body.total_price).toBe("30.00");

    expect((await patch("orders", id, { financial_status: "paid", source_updated_at: T2 })).headers.get("x-stale-write")).toBe("ignored");
    const applied = await patch("orders", id, { financial_status: "paid", source_updated_at: "2026-11-23T00:00:00Z" });
    expect(applied.headers.get("x-stale-write")).toBeNull();
    expect(applied.body.financial_status).toBe("paid");
    // Without a source time a write applies, as it always did.
    expect((await patch("orders", id, { financial_status: "refunded" })).body.financial_status).toBe("refunded");
    expect((await patch("orders", uid("missing"), { financial_status: "paid", source_updated_at: T1 })).status).toBe(404);
  });

  it("leaves nothing of a stale order push: its embedded customer and a new phone's contact stay as they were", async () => {
    const [id, customerId] = [uid("order"), uid("customer")];
    expect((await push("orders", order(id, { source_updated_at: T2, customer: { external_id: customerId, phone: "+14155550190", first_name: "Ada" } }))).status).toBe(201);
    const stale = await push("orders", order(id, { source_updated_at: T1, customer: { external_id: customerId, phone: "+14155550191", first_name: "Late" } }));
    expect(stale.headers.get("x-stale-write")).toBe("ignored");
    const customer = await server.db.selectFrom("customers").select(["first_name", "phone", "profile_version"]).where("store_id", "=", tenant.store.id).where("external_id", "=", customerId).executeTakeFirst();
    expect(customer).toEqual({ first_name: "Ada", phone: "+14155550190", profile_version: 1 });
    expect(await server.db.selectFrom("contacts").select("id").where("store_id", "=", tenant.store.id).where("phone", "=", "+14155550191").execute()).toEqual([]);
    expect((await jobs(customerId)).map((job) => job.flow)).toEqual(["contact_sync"]);
  });

  it("leaves nothing of a stale order or checkout in a batch either: their embedded customers stay as they were", async () => {
    const [id, checkoutId, customerId] = [uid("order"), uid("checkout"), uid("customer")];
    const customer = (first_name: string, phone: string) => ({ external_id: customerId, phone, first_name });
    expect((await push("orders", order(id, { source_updated_at: T2, customer: customer("Ada", "+14155550192") }))).status).toBe(201);
    const checkout = (fields: Record<string, unknown>) => ({ external_id: checkoutId, abandoned_at: "2026-11-20T08:00:00Z", total_price: 5, ...fields });
    expect((await push("checkouts", checkout({ source_updated_at: T2, customer: customer("Ada", "+14155550192") }))).status).toBe(201);
    const batch = (resource: string, items: unknown[]) => server.request("POST", `/api/v1/stores/${tenant.store.id}/${resource}/batch`, { key: tenant.key, body: { items } });
    const orders = await batch("orders", [order(id, { source_updated_at: T1, customer: customer("Late", "+14155550193") })]);
    const checkouts = await batch("checkouts", [checkout({ source_updated_at: T1, customer: customer("Later", "+14155550194") })]);
    expect([orders.body.results[0].stale, checkouts.body.results[0].stale]).toEqual([true, true]);
    const stored = await server.db.selectFrom("customers").select(["first_name", "phone", "profile_version"]).where("store_id", "=", tenant.store.id).where("external_id", "=", customerId).executeTakeFirst();
    expect(stored).toEqual({ first_name: "Ada", phone: "+14155550192", profile_version: 1 });
    expect(await server.db.selectFrom("contacts").select("id").where("store_id", "=", tenant.store.id).where("phone", "in", ["+14155550193", "+14155550194"]).execute()).toEqual([]);
    expect((await jobs(customerId)).map((job) => job.flow)).toEqual(["contact_sync"]);
  });

  it("triggers nothing: a late shipment status sends no notification, a late checkout push does not reopen it", async () => {
    const o = uid("order");
    await push("orders", order(o, {}));
    const shipment = { external_id: uid("ship"), order_external_id: o, status: "delivered", source_updated_at: T2 };
    expect((await push("shipments", shipment)).status).toBe(201);
    const late = await push("shipments", { ...shipment, status: "in_transit", source_updated_at: T1 });
    expect(late.headers.get("x-stale-write")).toBe("ignored");
    expect(late.body.status).toBe("delivered");
    expect((await jobs(shipment.external_id)).map((job) => job.payload)).toEqual([{ status: "delivered" }]);

    const c = { external_id: uid("checkout"), abandoned_at: T1, total_price: 5, customer: { phone: "+14155552672" }, source_updated_at: T1 };
    await push("checkouts", c);
    await patch("checkouts", c.external_id, { status: "active", source_updated_at: T3 });
    const reopened = await push("checkouts", { ...c, source_updated_at: T2 });
    expect(reopened.headers.get("x-stale-write")).toBe("ignored");
    expect(reopened.body.status).toBe("active");
    expect((await jobs(c.external_id)).filter((job) => job.flow === "checkout_recovery")).toHaveLength(1);
  });

  it("does not bring an erased customer back when it predates the erasure; a newer or untimed push creates it anew", async () => {
    const id = uid("customer");
    expect((await push("customers", { external_id: id, phone: "+14155552673", first_name: "Old", source_updated_at: T2 })).status).toBe(201);
    expect((await push("customers", { external_id: id, phone: "+14155552673", first_name: "Older", source_updated_at: T1 })).body.first_name).toBe("Old");
    expect((await server.request("DELETE", `/api/v1/stores/${tenant.store.id}/customers/${id}`, { key: tenant.key })).status).toBe(204);

    const beforeErasure = await push("customers", { external_id: id, phone: "+14155552673", first_name: "Ghost", email: "ghost@example.org", source_updated_at: T3 });
    expect(beforeErasure.status).toBe(200);
    expect(beforeErasure.headers.get("x-stale-write")).toBe("ignored");
    expect(beforeErasure.body).toEqual({ external_id: id, store_id: tenant.store.id, first_name: null, last_name: null, email: null, locale: null, tags: [], lifetime_value: 0, orders_count: 0 });
    const active = await server.db.selectFrom("customers").select("id").where("external_id", "=", id).where("deleted_at", "is", null).execute();
    expect(active).toHaveLength(0);
    expect(JSON.stringify(await server.db.selectFrom("customers").selectAll().execute())).not.toContain("ghost@example.org");

    const afterErasure = new Date(Date.now() + 60_000).toISOString();
    expect((await push("customers", { external_id: id, phone: "+14155552673", first_name: "New", source_updated_at: afterErasure })).status).toBe(201);
    const other = uid("customer");
    await push("customers", { external_id: other, phone: "+14155552674" });
    await server.request("DELETE", `/api/v1/stores/${tenant.store.id}/customers/${other}`, { key: tenant.key });
    expect((await push("customers", { external_id: other, phone: "+14155552674" })).status).toBe(201);
  });

  it("refuses a source time without a zone", async () => {
    const res = await push("orders", order(uid("order"), { source_updated_at: "2026-11-22T10:00:00" }));
    expect(res.status).toBe(422);
    expect(res.body.details).toEqual([{ path: "source_updated_at", message: expect.stringContaining("time zone") }]);
  });
});
