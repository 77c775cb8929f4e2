import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  AuthenticationError,
  CommerceIngestClient,
  ConnectionError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
  ServerError,
  TimeoutError,
  ValidationError,
  type OrderPatch,
} from "../src/index.js";
import pg from "pg";
import { SERVICE_TEST_TIMEOUT_MS, startService } from "./server.js";

let service: Awaited<ReturnType<typeof startService>>;
let tenant: { storeId: number; apiKey: string };
let client: CommerceIngestClient;

beforeAll(async () => {
  service = await startService();
  tenant = await service.tenant();
  client = new CommerceIngestClient({ apiKey: tenant.apiKey, baseUrl: service.url });
});
afterAll(() => service?.stop());

const placedAt = "2026-11-22T10:00:00Z";

describe("every method against a running service", () => {
  it("customers.upsert tells created from updated, and customers.delete erases", async () => {
    const first = await client.customers.upsert(tenant.storeId, { external_id: "sdk-c1", phone: "+14155552671", first_name: "Ada" });
    expect(first).toMatchObject({ created: true, status: 201, data: { external_id: "sdk-c1", first_name: "Ada", store_id: tenant.storeId } });
    expect(first.requestId).toMatch(/^[0-9a-f-]{36}$/);
    const second = await client.customers.upsert(tenant.storeId, { external_id: "sdk-c1", phone: "+14155552671", last_name: "Lovelace" });
    expect(second).toMatchObject({ created: false, status: 200, data: { first_name: "Ada", last_name: "Lovelace" } });
    const erased = await client.customers.delete(tenant.storeId, "sdk-c1");
    expect(erased).toMatchObject({ status: 204, data: null });
    expect((await client.customers.upsert(tenant.storeId, { external_id: "sdk-c1", phone: "+14155552671" })).created).toBe(true);
  });

  it("orders.upsert and orders.update, with reserved characters in the id", async () => {
    const id = "sdk/order #1 ?ü";
    const created = await client.orders.upsert(tenant.storeId, { external_id: id, placed_at: placedAt, total_price: 19.999, currency: "usd", customer: { phone: "415 555 2671" } });
    expect(created).toMatchObject({ created: true, data: { external_id: id, total_price: "20.00", currency: "USD", financial_status: null } });
    const updated = await client.orders.update(tenant.storeId, id, { financial_status: "paid", tags: ["vip"] });
    expect(updated).toMatchObject({ status: 200, data: { financial_status: "paid", tags: ["vip"], created_at: created.data.created_at } });
  });

  it("checkouts.upsert and checkouts.update", async () => {
    const created = await client.checkouts.upsert(tenant.storeId, { external_id: "sdk-k1", abandoned_at: placedAt, total_price: 50, recovery_url: "https://shop.example/r/1", customer: { phone: "+14155552671" } });
    expect(created).toMatchObject({ created: true, data: { status: "abandoned", recovery_url: "https://shop.example/r/1" } });
    const recovered = await client.checkouts.update(tenant.storeId, "sdk-k1", { status: "recovered" });
    expect(recovered.data.status).toBe("recovered");
    expect((await client.checkouts.upsert(tenant.storeId, { external_id: "sdk-k1", abandoned_at: placedAt, total_price: 50, customer: { phone: "+14155552671" } })).data.status).toBe("recovered");
  });

  it("shipments.upsert links to the order", async () => {
    await client.orders.upsert(tenant.storeId, { external_id: "sdk-o2", placed_at: placedAt, total_price: 5, customer: { phone: "+14155552671" } });
    const shipment = await client.shipments.upsert(tenant.storeId, { external_id: "sdk-s1", order_external_id: "sdk-o2", status: "in_transit", carrier: "UPS" });
    expect(shipment).toMatchObject({ created: true, data: { order_id: expect.any(Number), status: "in_transit", carrier: "UPS" } });
    const moved = await client.shipments.upsert(tenant.storeId, { external_id: "sdk-s1", order_external_id: "sdk-o2", status: "delivered" });
    expect(moved).toMatchObject({ created: false, data: { status: "delivered", carrier: "UPS" } });
  });

  it("the store-bound form takes the store once", async () => {
    const store = client.store(tenant.storeId);
    expect(store.storeId).toBe(tenant.storeId);
    const order = await store.orders.upsert({ external_id: "sdk-bound", placed_at: placedAt, total_price: 1, customer: { phone: "+14155552671" } });
    expect(order.created).toBe(true);
    expect((await store.orders.update("sdk-bound", { fulfillment_status: "fulfilled" })).data.fulfillment_status).toBe("fulfilled");
    expect((await store.customers.upsert({ phone: "+14155552672" })).data.external_id).toBe("+14155552672");
    expect((await store.customers.delete("+14155552672")).status).toBe(204);
    expect((await store.checkouts.upsert({ external_id: "sdk-bk", abandoned_at: placedAt, total_price: 1, customer: { phone: "+14155552671" } })).created).toBe(true);
    expect((await store.checkouts.update("sdk-bk", { status: "expired" })).data.status).toBe("expired");
    expect((await store.shipments.upsert({ external_id: "sdk-bs", order_external_id: "sdk-bound" })).created).toBe(true);
  });

  it("sends a caller's request id and marks backfill", async () => {
    const result = await client.customers.upsert(tenant.storeId, { phone: "+14155552673" }, { requestId: "shop-trace-1", backfill: true });
    expect(result.requestId).toBe("shop-trace-1");
  });
});

describe("reading back, headers and strict handling against a running service", () => {
  it("retrieve answers each stored record; a missing one is NotFoundError with its code", async () => {
    await client.orders.upsert(tenant.storeId, { external_id: "rb-o1", placed_at: placedAt, total_price: 12.5, customer: { external_id: "rb-c1", phone: "(415) 555-2679" }, line_items: [{ sku: "A" }] });
    await client.checkouts.upsert(tenant.storeId, { external_id: "rb-k1", abandoned_at: placedAt, total_price: 3, customer: { phone: "+14155552679" } });
    await client.shipments.upsert(tenant.storeId, { external_id: "rb-s1", order_external_id: "rb-o1", status: "in_transit" });
    const order = await client.orders.retrieve(tenant.storeId, "rb-o1");
    expect(order.data).toMatchObject({ external_id: "rb-o1", total_price: "12.50", placed_at: "2026-11-22T10:00:00.000+00:00", customer_external_id: "rb-c1", line_items: [{ sku: "A" }] });
    expect((await client.customers.retrieve(tenant.storeId, "rb-c1")).data.phone).toBe("+14155552679");
    expect((await client.checkouts.retrieve(tenant.storeId, "rb-k1")).data).toMatchObject({ status: "abandoned", abandoned_at: "2026-11-22T10:00:00.000+00:00" });
    expect((await client.store(tenant.storeId).shipments.retrieve("rb-s1")).data).toMatchObject({ order_external_id: "rb-o1", status: "in_transit" });
    const missing = await client.customers.retrieve(tenant.storeId, "nobody").catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(NotFoundError);
    expect(missing).toMatchObject({ code: "customer_not_found", body: { error: "Customer not found" } });
  });

  it("tells errors apart by the code the body carries, on a server whose messages were reworded", async () => {
    // The running service, its every error message reworded on the way: only the codes stay.
    const reworded: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      if (res.ok) return res;
      const body = (await res.json()) as Record<string, unknown>;
      const headers = new Headers(res.headers);
      headers.delete("content-length");
      return new Response(JSON.stringify({ ...body, error: `Reworded: ${String(body.error).toUpperCase()}` }), { status: res.status, headers });
    };
    const client = new CommerceIngestClient({ apiKey: tenant.apiKey, baseUrl: service.url, fetch: reworded, maxRetries: 0, logLevel: "off" });
    const stranger = new CommerceIngestClient({ apiKey: "x".repeat(24), baseUrl: service.url, fetch: reworded, maxRetries: 0, logLevel: "off" });
    const failures = await Promise.all([
      stranger.customers.upsert(tenant.storeId, { phone: "+14155552671" }).catch((e: unknown) => e),
      client.customers.upsert(999_999_999, { phone: "+14155552671" }).catch((e: unknown) => e),
      client.orders.update(tenant.storeId, "never-pushed", { financial_status: "paid" }).catch((e: unknown) => e),
      client.customers.retrieve(tenant.storeId, "nobody-at-all").catch((e: unknown) => e),
      client.shipments.upsert(tenant.storeId, { external_id: "sdk-s-orphan", order_external_id: "never-pushed" }).catch((e: unknown) => e),
    ]);
    expect(failures.map((failure) => (failure as { code: string }).code)).toEqual(["invalid_api_key", "store_not_found", "order_not_found", "customer_not_found", "shipment_order_not_found"]);
    expect(failures[2]).toMatchObject({ message: "Reworded: ORDER NOT FOUND", body: { code: "order_not_found" } });
  });

  it("lists every record of a store, page after page, as an async iterator", async () => {
    const t = await service.tenant();
    const scoped = client.store(t.storeId);
    const own = new CommerceIngestClient({ apiKey: t.apiKey, baseUrl: service.url }).store(t.storeId);
    const ids = ["l-1", "l-2", "l-3", "l-4", "l-5"];
    await own.orders.upsertMany(ids.map((id) => ({ external_id: id, placed_at: placedAt, total_price: 1, customer: { phone: "+14155552671" } })), { backfill: true });
    const seen: string[] = [];
    for await (const order of own.orders.list({ limit: 2 })) seen.push(order.external_id);
    expect(seen.sort()).toEqual(ids);
    const pages = [];
    for await (const page of own.orders.list({ limit: 2 }).pages()) pages.push(page.data.length);
    expect(pages).toEqual([2, 2, 1]);
    const first = await own.orders.listPage({ limit: 4 });
    expect(first.data).toMatchObject({ data: [{}, {}, {}, {}], next_cursor: expect.any(String) });
    const rest = await own.orders.listPage({ limit: 4, cursor: first.data.next_cursor ?? "" });
    expect(rest.data.data.map((order) => order.external_id)).toHaveLength(1);
    expect(rest.data.next_cursor).toBeNull();
    // Another team's key lists nothing of this store.
    const refused = await scoped.orders.listPage().catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: "store_not_authorized" });
    await own.customers.delete("+14155552671");
    const customers = [];
    for await (const customer of own.customers.list()) customers.push(customer);
    expect(customers).toEqual([expect.objectContaining({ external_id: null, phone: null, erased_at: expect.any(String) })]);
  });

  it("refuses unknown fields by default, and names them on the result when strict is off", async () => {
    await client.orders.upsert(tenant.storeId, { external_id: "st-o1", placed_at: placedAt, total_price: 1, customer: { phone: "+14155552671" } });
    const typo = { financial_staus: "refunded" } as unknown as OrderPatch;
    const refused = await client.orders.update(tenant.storeId, "st-o1", typo).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ValidationError);
    expect(refused).toMatchObject({ code: "validation_failed", details: [{ path: "financial_staus", message: "unknown field" }] });
    const lenient = new CommerceIngestClient({ apiKey: tenant.apiKey, baseUrl: service.url, strict: false, logLevel: "off" });
    const accepted = await lenient.orders.update(tenant.storeId, "st-o1", typo);
    expect(accepted.ignoredFields).toEqual(["financial_staus"]);
    expect((await client.orders.update(tenant.storeId, "st-o1", typo, { strict: false })).ignoredFields).toEqual(["financial_staus"]);
  });

  it("gives the answer's headers: rate limit and stale writes", async () => {
    const first = await client.customers.upsert(tenant.storeId, { external_id: "hd-c1", phone: "+14155552671", source_updated_at: "2026-11-22T10:00:00Z" });
    expect(Number(first.headers.get("ratelimit-remaining"))).toBeGreaterThan(0);
    expect(first.stale).toBe(false);
    const older = await client.customers.upsert(tenant.storeId, { external_id: "hd-c1", phone: "+14155552671", first_name: "Old", source_updated_at: "2026-11-21T10:00:00Z" });
    expect(older).toMatchObject({ stale: true, created: false, data: { first_name: null } });
  });

  it("reports created: true for a create whose first answer was lost, through the Idempotency-Key", async () => {
    let lost = 0;
    const losing: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      if (lost++ === 0) throw new TypeError("socket hang up");
      return response;
    };
    const flaky = new CommerceIngestClient({ apiKey: tenant.apiKey, baseUrl: service.url, fetch: losing, logLevel: "off" });
    const result = await flaky.orders.upsert(tenant.storeId, { external_id: "idem-o1", placed_at: placedAt, total_price: 1, customer: { phone: "+14155552671" } });
    expect(lost).toBe(2);
    expect(result).toMatchObject({ created: true, status: 201 });
    expect(result.headers.get("idempotent-replayed")).toBe("true");
  });
});

describe("upsertMany", () => {
  it("sends any number of records in batches, in order, with progress and one result per record", async () => {
    const progress: number[] = [];
    const orders = Array.from({ length: 5 }, (_, i) => ({ external_id: `many-${i}`, placed_at: placedAt, total_price: i + 1, customer: { phone: "+14155552671" } }));
    orders[3] = { ...orders[3], placed_at: "not a time" } as (typeof orders)[number];
    const result = await client.orders.upsertMany(tenant.storeId, orders, { batchSize: 2, onProgress: ({ done }) => progress.push(done) });
    expect(progress).toEqual([2, 4, 5]);
    expect(result.counts).toEqual({ created: 4, updated: 0, failed: 1 });
    expect(result.results.map((r) => [r.external_id, r.status])).toEqual([
      ["many-0", 201],
      ["many-1", 201],
      ["many-2", 201],
      ["many-3", 422],
      ["many-4", 201],
    ]);
    expect(result.results[3]?.details).toEqual([{ path: "placed_at", message: expect.any(String) }]);
    expect(result.results[4]?.record?.total_price).toBe("5.00");
    const again = await client.store(tenant.storeId).orders.upsertMany(orders.filter((_, i) => i !== 3));
    expect(again.counts).toEqual({ created: 0, updated: 4, failed: 0 });
    await expect(client.orders.upsertMany(tenant.storeId, orders, { batchSize: 1001 })).rejects.toMatchObject({ name: "CommerceIngestError", code: "invalid_usage" });
  });

  it("splits by bytes as well as by count: 3,000 orders of 1.4 KB never cross the body limit, as history", async () => {
    const t = await service.tenant();
    const own = new CommerceIngestClient({ apiKey: t.apiKey, baseUrl: service.url }).store(t.storeId);
    const lineItems = Array.from({ length: 4 }, (_, i) => ({ sku: `SKU-${i}-${"x".repeat(120)}`, title: `A product with a long name, ${"y".repeat(120)}`, quantity: 1, price: 19.99 }));
    const orders = Array.from({ length: 3000 }, (_, i) => ({
      external_id: `bytes-${i}`,
      placed_at: placedAt,
      total_price: 79.96,
      customer: { external_id: `bytes-c${i % 50}`, phone: "+14155552671", first_name: "Ada", last_name: "Lovelace", email: "ada@example.com" },
      line_items: lineItems,
      tags: ["web", "backfill"],
    }));
    expect(new TextEncoder().encode(JSON.stringify(orders[0])).length).toBeGreaterThan(1400);
    const sizes: number[] = [];
    let sent = 0;
    const result = await own.orders.upsertMany(orders, {
      backfill: true,
      onProgress: ({ done }) => {
        sizes.push(done - sent);
        sent = done;
      },
    });
    expect(result.counts).toEqual({ created: 3000, updated: 0, failed: 0 });
    // Each request under 1,000,000 bytes: fewer than 1,000 orders of this size each.
    expect(Math.max(...sizes)).toBeLessThan(1000);
    expect(sizes.reduce((sum, n) => sum + n, 0)).toBe(3000);
  });
});

describe("each error class from a real response", () => {
  it("AuthenticationError for an unknown key", async () => {
    const bad = new CommerceIngestClient({ apiKey: "AAAAAAAAAAAAAAAAAAAAAAAA", baseUrl: service.url });
    const error = await bad.customers.upsert(tenant.storeId, { phone: "+14155552671" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(error).toMatchObject({ status: 401, message: "Invalid API key", requestId: expect.any(String) });
  });

  it("PermissionDeniedError for another team's store", async () => {
    const other = await service.tenant();
    const error = await client.customers.upsert(other.storeId, { phone: "+14155552671" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PermissionDeniedError);
    expect(error).toMatchObject({ status: 403, message: "API key does not authorize this store" });
  });

  it("NotFoundError for an unknown order and an unknown store", async () => {
    const order = await client.orders.update(tenant.storeId, "missing", { financial_status: "paid" }).catch((e: unknown) => e);
    expect(order).toBeInstanceOf(NotFoundError);
    expect(order).toMatchObject({ status: 404, message: "Order not found" });
    const store = await client.customers.upsert(99999999, { phone: "+14155552671" }).catch((e: unknown) => e);
    expect(store).toMatchObject({ status: 404, message: "Store not found or paused", code: "store_not_found" });
    expect(order).toMatchObject({ code: "order_not_found", body: { error: "Order not found" } });
  });

  it("ValidationError with the field details, never retried", async () => {
    const error = await client.orders
      .upsert(tenant.storeId, { external_id: "x", placed_at: "yesterday", total_price: -1, customer: { phone: "+14155552671" } })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).details.map((d) => d.path).sort()).toEqual(["placed_at", "total_price"]);
    const missingOrder = await client.shipments.upsert(tenant.storeId, { external_id: "s", order_external_id: "none" }).catch((e: unknown) => e);
    expect(missingOrder).toBeInstanceOf(ValidationError);
    expect((missingOrder as ValidationError).details).toEqual([{ path: "order_external_id", message: expect.any(String) }]);
  });

  it("RateLimitError with retryAfter, once retries are spent", async () => {
    const limited = await startService({ RATE_LIMIT_REQUESTS: "2", RATE_LIMIT_WINDOW_SECONDS: "60" });
    try {
      const t = await limited.tenant();
      const c = new CommerceIngestClient({ apiKey: t.apiKey, baseUrl: limited.url, maxRetries: 0 });
      await c.customers.upsert(t.storeId, { phone: "+14155552671" });
      await c.customers.upsert(t.storeId, { phone: "+14155552671" });
      const error = await c.customers.upsert(t.storeId, { phone: "+14155552671" }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RateLimitError);
      expect((error as RateLimitError).retryAfter).toBeGreaterThan(0);
    } finally {
      await limited.stop();
    }
  }, SERVICE_TEST_TIMEOUT_MS);

  it.runIf(Boolean(process.env.TEST_DATABASE_URL))("ServerError when the service loses its database", async () => {
    const serverUrl = process.env.TEST_DATABASE_URL ?? "";
    const name = `sdk_${process.pid}_${Date.now()}`;
    const admin = new pg.Client({ connectionString: serverUrl });
    await admin.connect();
    try {
      await admin.query(`create database ${name}`);
      const url = new URL(serverUrl);
      url.pathname = `/${name}`;
      const service = await startService({ DATABASE_URL: url.toString() });
      try {
        const t = await service.tenant();
        const c = new CommerceIngestClient({ apiKey: t.apiKey, baseUrl: service.url, maxRetries: 0 });
        expect((await c.customers.upsert(t.storeId, { phone: "+14155552671" })).created).toBe(true);
        await admin.query(`drop database ${name} with (force)`);
        const error = await c.customers.upsert(t.storeId, { phone: "+14155552671" }).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(ServerError);
        expect(error).toMatchObject({ status: 503, message: "Service unavailable", requestId: expect.any(String) });
      } finally {
        await service.stop();
      }
    } finally {
      await admin.query(`drop database if exists ${name} with (force)`);
      await admin.end();
    }
  }, SERVICE_TEST_TIMEOUT_MS);

  it("ConnectionError when nothing listens, TimeoutError when nothing answers", async () => {
    const closed = new CommerceIngestClient({ apiKey: tenant.apiKey, baseUrl: "http://127.0.0.1:1", maxRetries: 0 });
    const refused = await closed.customers.upsert(tenant.storeId, { phone: "+14155552671" }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ConnectionError);
    expect(refused).not.toBeInstanceOf(TimeoutError);

    const silent = http.createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", () => resolve()));
    try {
      const url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
      const slow = new CommerceIngestClient({ apiKey: tenant.apiKey, baseUrl: url, maxRetries: 0, timeout: 200 });
      // The server never answers: only the client's own timeout ends the call.
      const error = await slow.customers.upsert(tenant.storeId, { phone: "+14155552671" }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TimeoutError);
    } finally {
      silent.closeAllConnections();
      silent.close();
    }
  });
});
