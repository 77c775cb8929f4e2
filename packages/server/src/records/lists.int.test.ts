import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "kysely";
import { startTestServer, testDb, type TestServer } from "../../test/helpers.js";

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server?.close());

type Tenant = Awaited<ReturnType<TestServer["createTenant"]>>;
type Page = { data: Array<Record<string, unknown> & { external_id: string | null; updated_at: string }>; next_cursor: string | null };

let seq = 0;
const uid = (prefix: string) => `${prefix}-${Date.now()}-${++seq}`;
const order = (id: string, fields: Record<string, unknown> = {}) => ({
  external_id: id,
  placed_at: "2026-11-22T10:00:00Z",
  total_price: 10,
  customer: { external_id: `buyer-${id}`, phone: "+14155552671" },
  ...fields,
});

/** Stores orders through batches of up to 1,000, as history (no automation). */
async function storeOrders(t: Tenant, ids: readonly string[]) {
  for (let start = 0; start < ids.length; start += 1000) {
    const items = ids.slice(start, start + 1000).map((id) => order(id));
    const res = await server.request("POST", `/api/v1/stores/${t.store.id}/orders/batch`, { key: t.key, body: { items }, headers: { "X-Backfill": "true" } });
    expect(res.status).toBe(200);
  }
}

/** Every page of a list, from the start (or `query`), following `next_cursor` until it is null. */
async function pageThrough(t: Tenant, resource: string, query: Record<string, string> = {}, between: () => Promise<void> = async () => {}) {
  const pages: Page[] = [];
  let cursor: string | null | undefined;
  do {
    const params = new URLSearchParams({ ...query, ...(cursor ? { cursor } : {}) });
    const res = await server.request("GET", `/api/v1/stores/${t.store.id}/${resource}?${params.toString()}`, { key: t.key });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const page = res.body as Page;
    pages.push(page);
    cursor = page.next_cursor;
    await between();
  } while (cursor);
  return pages;
}

describe("lists", () => {
  it("page through every record of the store once, in the order they changed, then by id", async () => {
    const t = await server.createTenant();
    const ids = Array.from({ length: 250 }, (_, i) => uid(`o${i}`));
    await storeOrders(t, ids);
    const pages = await pageThrough(t, "orders", { limit: "100" });
    expect(pages.map((page) => page.data.length)).toEqual([100, 100, 50]);
    const seen = pages.flatMap((page) => page.data);
    expect(seen.map((record) => record.external_id).sort()).toEqual([...ids].sort());
    // As read back one by one.
    const one = await server.request("GET", `/api/v1/stores/${t.store.id}/orders/${encodeURIComponent(ids[7] ?? "")}`, { key: t.key });
    expect(seen.find((record) => record.external_id === ids[7])).toEqual(one.body);
    const times = seen.map((record) => Date.parse(record.updated_at));
    expect(times).toEqual([...times].sort((a, b) => a - b));
  });

  it("paging 2,500 records while writes continue returns every untouched record exactly once, and every one written meanwhile at least once, in its newest form", async () => {
    const t = await server.createTenant();
    const ids = Array.from({ length: 2500 }, (_, i) => uid(`p${i}`));
    await storeOrders(t, ids);
    const touched = new Set<string>();
    const written = new Map<string, string>();
    let writing = true;
    let version = 0;
    // Four writers: statuses of stored orders changed, and new orders, while the pages are read.
    const writers = Array.from({ length: 4 }, async () => {
      while (writing) {
        const status = `v${++version}`;
        if (version % 3 === 0) {
          const id = uid("new");
          touched.add(id);
          const res = await server.request("POST", `/api/v1/stores/${t.store.id}/orders`, { key: t.key, body: order(id, { financial_status: status }), headers: { "X-Backfill": "true" } });
          expect(res.status).toBe(201);
          written.set(id, status);
        } else {
          const id = ids[Math.floor(Math.random() * ids.length)] ?? "";
          touched.add(id);
          const res = await server.request("PATCH", `/api/v1/stores/${t.store.id}/orders/${encodeURIComponent(id)}`, { key: t.key, body: { financial_status: status } });
          expect(res.status).toBe(200);
          written.set(id, status);
        }
      }
    });
    let pagesRead = 0;
    const pages = await pageThrough(t, "orders", { limit: "100" }, async () => {
      // The writes go on over the first half of the pages, then stop: the rest of the pages catch up with them.
      if (++pagesRead === 12) {
        writing = false;
        await Promise.all(writers);
      }
    });
    writing = false;
    await Promise.all(writers);
    expect(written.size).toBeGreaterThan(10);

    const seen = pages.flatMap((page) => page.data);
    const count = new Map<string, number>();
    const last = new Map<string, Record<string, unknown>>();
    for (const record of seen) {
      count.set(String(record.external_id), (count.get(String(record.external_id)) ?? 0) + 1);
      last.set(String(record.external_id), record);
    }
    const untouched = ids.filter((id) => !touched.has(id));
    expect(untouched.filter((id) => count.get(id) !== 1)).toEqual([]);
    expect([...touched].filter((id) => (count.get(id) ?? 0) < 1)).toEqual([]);
    // Each record written meanwhile was last seen as last written.
    expect([...written].filter(([id, status]) => last.get(id)?.financial_status !== status)).toEqual([]);
  });

  it.runIf(testDb === "postgres")("never pass a write still under way: a page ends before its start until it commits, and then holds it", async () => {
    const t = await server.createTenant();
    const early = uid("early");
    await storeOrders(t, [early]);
    const trx = await server.db.startTransaction().execute();
    try {
      // A write under way: its order's updated_at is its transaction's start, before the writes that follow.
      await sql`update orders set financial_status = 'held', updated_at = now() where store_id = ${t.store.id} and external_id = ${early}`.execute(trx);
      await new Promise((resolve) => setTimeout(resolve, 20));
      const later = uid("later");
      await storeOrders(t, [later]);
      const list = (cursor?: string) => server.request("GET", `/api/v1/stores/${t.store.id}/orders${cursor ? `?cursor=${cursor}` : ""}`, { key: t.key });
      const during = (await list()).body as Page;
      // The order as committed before, but neither the held write nor anything that changed after it started; and a
      // cursor, since something did: the caller goes on from here, and misses nothing.
      expect(during.data.map((record) => [record.external_id, record.financial_status])).toEqual([[early, null]]);
      expect(during.next_cursor).toEqual(expect.any(String));
      const stillHeld = (await list(during.next_cursor ?? "")).body as Page;
      expect(stillHeld).toEqual({ data: [], next_cursor: during.next_cursor });
      await trx.commit().execute();
      const after = (await list(during.next_cursor ?? "")).body as Page;
      expect(after.data.map((record) => [record.external_id, record.financial_status])).toEqual([
        [early, "held"],
        [later, null],
      ]);
      expect(after.next_cursor).toBeNull();
    } catch (error) {
      await trx.rollback().execute();
      throw error;
    }
  });

  it("start from updated_after, and give erased customers without any personal data", async () => {
    const t = await server.createTenant({ country: "US" });
    const push = (body: object) => server.request("POST", `/api/v1/stores/${t.store.id}/customers`, { key: t.key, body });
    await push({ external_id: "kept", phone: "+14155552671", first_name: "Ada" });
    await push({ external_id: "gone", phone: "+14155552672", first_name: "Grace", email: "grace@example.org" });
    await push({ phone: "+14155552673", first_name: "Phone-keyed" });
    const before = (await pageThrough(t, "customers"))[0]?.data ?? [];
    expect(before.map((customer) => customer.external_id).sort()).toEqual(["+14155552673", "gone", "kept"]);
    const since = String(before.find((customer) => customer.external_id === "kept")?.updated_at);
    for (const id of ["gone", "+14155552673"]) expect((await server.request("DELETE", `/api/v1/stores/${t.store.id}/customers/${encodeURIComponent(id)}`, { key: t.key })).status).toBe(204);

    const after = (await pageThrough(t, "customers", { updated_after: since })).flatMap((page) => page.data);
    // Only what changed after the first push: the two erasures.
    expect(after).toHaveLength(2);
    for (const erased of after) {
      expect(erased).toMatchObject({ first_name: null, last_name: null, email: null, phone: null, tags: [], erased_at: expect.any(String) });
      expect(JSON.stringify(erased)).not.toMatch(/Grace|grace@|\+1415555267[23]/);
    }
    expect(after.map((customer) => customer.external_id).sort((a, b) => String(a).localeCompare(String(b)))).toEqual(["gone", null]);
    const all = (await pageThrough(t, "customers")).flatMap((page) => page.data);
    expect(all.find((customer) => customer.external_id === "kept")).toMatchObject({ first_name: "Ada", erased_at: null });
  });

  it("list each resource, and only the store's own records", async () => {
    const t = await server.createTenant();
    const other = await server.createTenant();
    const id = uid("own");
    await storeOrders(t, [id]);
    await storeOrders(other, [uid("theirs")]);
    await server.request("POST", `/api/v1/stores/${t.store.id}/checkouts`, { key: t.key, body: { external_id: id, abandoned_at: "2026-11-22T09:00:00Z", total_price: 5, customer: { phone: "+14155552671" } } });
    await server.request("POST", `/api/v1/stores/${t.store.id}/shipments`, { key: t.key, body: { external_id: id, order_external_id: id, status: "in_transit" } });
    for (const resource of ["orders", "checkouts", "shipments"]) {
      const records = (await pageThrough(t, resource)).flatMap((page) => page.data);
      expect({ resource, ids: records.map((record) => record.external_id) }).toEqual({ resource, ids: [id] });
    }
    const shipment = (await pageThrough(t, "shipments"))[0]?.data[0];
    expect(shipment).toMatchObject({ order_external_id: id, status: "in_transit" });
  });

  it("refuse a bad limit, time or cursor with 422 naming it, and answer the auth table as every read", async () => {
    const t = await server.createTenant();
    const other = await server.createTenant();
    const list = (query: string, key: string | null = t.key, store = t.store.id) => server.request("GET", `/api/v1/stores/${store}/orders${query}`, key === null ? {} : { key });
    for (const [query, path] of [
      ["?limit=0", "limit"],
      ["?limit=1001", "limit"],
      ["?limit=ten", "limit"],
      ["?updated_after=yesterday", "updated_after"],
      ["?updated_after=2026-11-22T10:00:00", "updated_after"],
      ["?cursor=not-a-cursor", "cursor"],
      [`?cursor=${Buffer.from(JSON.stringify(["2026-11-22", 1])).toString("base64url")}`, "cursor"],
    ] as const) {
      const res = await list(query);
      expect({ query, status: res.status, code: (res.body as { code: string }).code, paths: (res.body as { details: Array<{ path: string }> }).details?.map((detail) => detail.path) }).toEqual({
        query,
        status: 422,
        code: "validation_failed",
        paths: [path],
      });
    }
    expect((await list("?limit=1000")).status).toBe(200);
    expect(await list("", null)).toMatchObject({ status: 401, body: { code: "api_key_missing" } });
    expect(await list("", "x".repeat(24))).toMatchObject({ status: 401, body: { code: "invalid_api_key" } });
    expect(await list("", t.key, other.store.id)).toMatchObject({ status: 403, body: { code: "store_not_authorized" } });
    expect(await list("", t.key, 999_999_999)).toMatchObject({ status: 404, body: { code: "store_not_found" } });
  });
});
