import { describe, expect, it } from "vitest";
import { metricValue, refuseInserts, startTestServer, type TestServer, uid, withTestServer, type TestTenant } from "../../test/helpers.js";

let server: TestServer;
let tenant: TestTenant;
withTestServer((started, created) => ([server, tenant] = [started, created]));

const order = (id: string, extra: Record<string, unknown> = {}) => ({ external_id: id, placed_at: "2026-11-22T10:00:00Z", total_price: 10, customer: { phone: "+14155552671" }, ...extra });
const batch = (resource: string, items: unknown, options: { key?: string; storeId?: number; headers?: Record<string, string> } = {}) =>
  server.request("POST", `/api/v1/stores/${options.storeId ?? tenant.store.id}/${resource}/batch`, { key: options.key ?? tenant.key, body: { items }, ...(options.headers ? { headers: options.headers } : {}) });
/** Batch writes the service made again item by item after their one statement failed (its metrics). */
const writtenItemByItem = () => metricValue(server, "batch_writes_item_by_item_total");
const postPurchases = (ids: string[]) =>
  server.db.selectFrom("automation_jobs").select(["record_external_id"]).where("flow", "=", "post_purchase").where("record_external_id", "in", ids).execute();

describe("batch endpoints", () => {
  it("store valid items and refuse invalid ones, each with its own result, in order", async () => {
    const [a, b] = [uid("o"), uid("o")];
    const res = await batch("orders", [order(a), { external_id: "bad", placed_at: "yesterday", total_price: -1, customer: { phone: "+14155552671" } }, order(b, { total_price: 19.999 })]);
    expect(res.status).toBe(200);
    expect(res.body.counts).toEqual({ created: 2, updated: 0, failed: 1 });
    expect(res.body.results).toEqual([
      { status: 201, external_id: a, record: expect.objectContaining({ external_id: a, total_price: "10.00" }) },
      { status: 422, external_id: "bad", error: "Invalid request body", code: "validation_failed", details: expect.arrayContaining([expect.objectContaining({ path: "placed_at" }), expect.objectContaining({ path: "total_price" })]) },
      { status: 201, external_id: b, record: expect.objectContaining({ total_price: "20.00" }) },
    ]);
    const stored = await server.db.selectFrom("orders").select("external_id").where("store_id", "=", tenant.store.id).where("external_id", "in", [a, b, "bad"]).execute();
    expect(stored.map((row) => row.external_id).sort()).toEqual([a, b].sort());
    // Each new order's automation, exactly as if pushed alone.
    expect((await postPurchases([a, b])).map((job) => job.record_external_id).sort()).toEqual([a, b].sort());
  });

  it("apply duplicates of one key in order: the last wins, one post-purchase", async () => {
    const id = uid("o");
    const res = await batch("orders", [order(id, { financial_status: "pending" }), order(id, { financial_status: "paid" })]);
    expect(res.body.results.map((r: { status: number }) => r.status)).toEqual([201, 200]);
    expect(res.body.results[1].record.financial_status).toBe("paid");
    expect(await postPurchases([id])).toHaveLength(1);
  });

  it("take exactly 1,000 items, and refuse 1,001 or none with a 422 before any item", async () => {
    const customers = Array.from({ length: 1000 }, (_, i) => ({ external_id: `bulk-${i}`, phone: `+1415555${String(1000 + i).padStart(4, "0")}` }));
    const full = await batch("customers", customers);
    expect(full.status).toBe(200);
    expect(full.body.counts).toEqual({ created: 1000, updated: 0, failed: 0 });
    const tooMany = await batch("customers", [...customers, { external_id: "one-more", phone: "+14155550000" }]);
    expect(tooMany.status).toBe(422);
    expect(tooMany.body).toEqual({ error: "Invalid request body", code: "validation_failed", details: [{ path: "items", message: "must hold at most 1000 records (send more batches)" }] });
    expect(await server.db.selectFrom("customers").select("id").where("external_id", "=", "one-more").execute()).toEqual([]);
    expect((await batch("customers", [])).status).toBe(422);
    expect((await batch("customers", { phone: "+14155552671" })).body.details).toEqual([{ path: "items", message: "must be an array of records" }]);
    expect((await server.request("POST", `/api/v1/stores/${tenant.store.id}/customers/batch`, { key: tenant.key, body: [customers[0]] })).status).toBe(422);
  });

  it("check the key and the store before any item", async () => {
    const id = uid("o");
    expect((await batch("orders", [order(id)], { key: "x".repeat(24) })).status).toBe(401);
    const other = await server.createTenant();
    expect((await batch("orders", [order(id)], { storeId: other.store.id })).status).toBe(403);
    const paused = await server.createTenant({ paused: true });
    expect((await batch("orders", [order(id)], { key: paused.key, storeId: paused.store.id })).status).toBe(404);
    expect(await server.db.selectFrom("orders").select("id").where("external_id", "=", id).execute()).toEqual([]);
  });

  it("answer each resource's own rules per item: a shipment without its order, strict handling, backfill", async () => {
    const orderId = uid("o");
    await batch("orders", [order(orderId)]);
    const shipments = await batch("shipments", [
      { external_id: uid("s"), order_external_id: orderId, status: "in_transit" },
      { external_id: "orphan", order_external_id: "no-such-order" },
      { external_id: uid("s"), order_external_id: orderId, carier: "UPS" },
    ], { headers: { Prefer: "handling=strict" } });
    expect(shipments.body.results.map((r: { status: number; error?: string; details?: unknown }) => [r.status, r.error ?? null, r.details ?? null])).toEqual([
      [201, null, null],
      [422, "Order not found", [{ path: "order_external_id", message: expect.any(String) }]],
      [422, "Invalid request body", [{ path: "carier", message: "unknown field" }]],
    ]);
    const lenient = await batch("checkouts", [{ external_id: uid("k"), abandoned_at: "2026-11-22T09:00:00Z", total_price: 5, customer: { phone: "+14155552671" }, statuss: "x" }]);
    expect(lenient.body.results[0]).toMatchObject({ status: 201, ignored_fields: ["statuss"] });
    const historical = uid("o");
    const backfilled = await batch("orders", [order(historical)], { headers: { "X-Backfill": "true" } });
    expect(backfilled.body.results[0].status).toBe(201);
    expect(await postPurchases([historical])).toEqual([]);
  });

  it("answer 500 for an item whose write fails inside the database, leaving nothing of it, and store the others", async () => {
    const [a, b, broken] = [uid("o"), uid("o"), uid("boom")];
    const brokenCustomer = uid("c");
    const allow = await refuseInserts(server.db, "orders", "boom-");
    const itemByItem = await writtenItemByItem();
    expect(itemByItem).toBeGreaterThanOrEqual(0);
    try {
      const res = await batch("orders", [order(a), order(broken, { customer: { external_id: brokenCustomer, phone: "+14155552671" } }), order(b)]);
      // The one statement failed whole, and the items went one by one: counted, so that an operator sees it.
      expect(await writtenItemByItem()).toBe(itemByItem + 1);
      expect(res.status).toBe(200);
      expect(res.body.results.map((r: { status: number; error?: string }) => [r.status, r.error ?? null])).toEqual([
        [201, null],
        [500, "Internal server error"],
        [201, null],
      ]);
      expect(res.body.counts).toEqual({ created: 2, updated: 0, failed: 1 });
    } finally {
      await allow();
    }
    const stored = await server.db.selectFrom("orders").select("external_id").where("external_id", "in", [a, b, broken]).execute();
    expect(stored.map((row) => row.external_id).sort()).toEqual([a, b].sort());
    // The customer the failed item had already written went with it.
    expect(await server.db.selectFrom("customers").select("id").where("external_id", "=", brokenCustomer).execute()).toEqual([]);
    expect((await postPurchases([a, b, broken])).map((job) => job.record_external_id).sort()).toEqual([a, b].sort());
  });

  it("store nothing of a batch when the database fails in its middle, and answer 503", async () => {
    const [a, b, failing] = [uid("o"), uid("o"), uid("down")];
    const customerA = uid("c");
    const restore = await refuseInserts(server.db, "orders", "down-", "57P01");
    try {
      const res = await batch("orders", [order(a, { customer: { external_id: customerA, phone: "+14155552671" } }), order(failing), order(b)]);
      expect(res.status).toBe(503);
      expect(res.body).toEqual({ error: "Service unavailable", code: "service_unavailable" });
      expect(res.headers.get("retry-after")).toMatch(/^\d+$/);
    } finally {
      await restore();
    }
    expect(await server.db.selectFrom("orders").select("id").where("external_id", "in", [a, b, failing]).execute()).toEqual([]);
    expect(await server.db.selectFrom("customers").select("id").where("external_id", "=", customerA).execute()).toEqual([]);
    expect(await postPurchases([a, b])).toEqual([]);
  });

  it("cost one unit of the rate limit per 250 records, and are refused 422, never 429, when they could never pass", async () => {
    const limited = await startTestServer({ rateLimit: { requests: 5, windowSeconds: 60 } });
    try {
      const t = await limited.createTenant();
      const send = (n: number, from = 0) =>
        limited.request("POST", `/api/v1/stores/${t.store.id}/customers/batch`, {
          key: t.key,
          body: { items: Array.from({ length: n }, (_, i) => ({ phone: `+1202555${String(1000 + from + i).padStart(4, "0")}` })) },
        });
      const first = await send(1000);
      expect(first.status).toBe(200);
      // 1,000 records: 4 units of 5.
      expect(first.headers.get("ratelimit-remaining")).toBe("1");
      const second = await send(250, 1000);
      expect(second.status).toBe(200);
      expect(second.headers.get("ratelimit-remaining")).toBe("0");
      const third = await send(1);
      expect(third.status).toBe(429);
      expect(await limited.db.selectFrom("customers").select("id").where("store_id", "=", t.store.id).execute()).toHaveLength(1250);
      // Over 1,000 records: 422 before the limit is consulted, though the window is spent.
      const tooMany = await send(1001);
      expect(tooMany).toMatchObject({ status: 422, body: { code: "validation_failed", details: [{ path: "items", message: "must hold at most 1000 records (send more batches)" }] } });
    } finally {
      await limited.close();
    }
    const tiny = await startTestServer({ rateLimit: { requests: 2, windowSeconds: 60 } });
    try {
      const t = await tiny.createTenant();
      // 1,000 records cost 4 units: they never fit a limit of 2, so retrying is no help.
      const res = await tiny.request("POST", `/api/v1/stores/${t.store.id}/customers/batch`, { key: t.key, body: { items: Array.from({ length: 1000 }, () => ({ phone: "+12025550100" })) } });
      expect(res).toMatchObject({ status: 422, body: { code: "validation_failed", details: [{ path: "items", message: "costs 4 units of a rate limit of 2 a window: send at most 500 records per batch" }] } });
      expect(res.headers.get("retry-after")).toBeNull();
    } finally {
      await tiny.close();
    }
  });
});
