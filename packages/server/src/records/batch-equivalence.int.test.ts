import { describe, expect, it } from "vitest";
import { retriesCounted, type TestServer, uid, withTestServer, type TestTenant, warningsInto } from "../../test/helpers.js";

let server: TestServer;
let tenant: TestTenant;
/** What the server logged at warn and above: a batch that could not be written set-based says so. */
const warnings: string[] = [];
const writtenOneByOne = () => warnings.filter((line) => line.includes("batch written item by item"));

withTestServer((started, created) => ([server, tenant] = [started, created]), { logger: warningsInto(warnings) });

let seq = 0;
const order = (id: string, extra: Record<string, unknown> = {}) => ({ external_id: id, placed_at: "2026-11-22T10:00:00Z", total_price: 10, customer: { phone: "+14155552671" }, ...extra });
const batch = (resource: string, items: unknown, options: { key?: string; storeId?: number; headers?: Record<string, string> } = {}) =>
  server.request("POST", `/api/v1/stores/${options.storeId ?? tenant.store.id}/${resource}/batch`, { key: options.key ?? tenant.key, body: { items }, ...(options.headers ? { headers: options.headers } : {}) });
const postPurchases = (ids: string[]) =>
  server.db.selectFrom("automation_jobs").select(["record_external_id"]).where("flow", "=", "post_purchase").where("record_external_id", "in", ids).execute();

describe("a batch leaves what the same pushes one by one leave", () => {
  it("write orders sharing customers together, as the same pushes one by one leave them", async () => {
    const [customerKey, phoneA, phoneB] = [uid("c"), "+14155550101", "+14155550102"];
    const [o1, o2, o3, old] = [uid("o"), uid("o"), uid("o"), uid("o")];
    // An order already stored with a newer source time, and a checkout whose recovery is pending.
    expect((await batch("orders", [order(old, { source_updated_at: "2026-11-22T12:00:00Z", financial_status: "paid" })])).body.results[0].status).toBe(201);
    const checkout = uid("k");
    await server.request("POST", `/api/v1/stores/${tenant.store.id}/checkouts`, {
      key: tenant.key,
      body: { external_id: checkout, abandoned_at: "2026-11-22T08:00:00Z", total_price: 5, customer: { phone: phoneB } },
    });
    const res = await batch("orders", [
      order(o1, { customer: { external_id: customerKey, phone: phoneA, first_name: "Ada", email: "ada@example.com" } }),
      order(o2, { customer: { phone: phoneB }, currency: "eur" }),
      order(old, { source_updated_at: "2026-11-22T11:00:00Z", financial_status: "refunded" }),
      order(o3, { customer: { external_id: customerKey, phone: phoneA, first_name: "Ada B." }, tags: ["vip", "vip"] }),
    ]);
    expect(res.status).toBe(200);
    expect(res.body.results.map((r: { status: number; stale?: boolean }) => [r.status, r.stale ?? false])).toEqual([
      [201, false],
      [201, false],
      [200, true],
      [201, false],
    ]);
    expect(res.body.results[1].record).toMatchObject({ external_id: o2, currency: "EUR" });
    expect(res.body.results[2].record).toMatchObject({ external_id: old, financial_status: "paid" });
    expect(res.body.results[3].record).toMatchObject({ external_id: o3, tags: ["vip"] });
    // One customer for the key, its fields merged in order (the last sent wins, the absent kept), both orders linked to it.
    const customers = await server.db.selectFrom("customers").selectAll().where("store_id", "=", tenant.store.id).where("external_id", "=", customerKey).execute();
    expect(customers).toHaveLength(1);
    expect(customers[0]).toMatchObject({ first_name: "Ada B.", email: "ada@example.com", phone: phoneA });
    const linked = await server.db.selectFrom("orders").select(["external_id", "customer_id"]).where("external_id", "in", [o1, o3]).execute();
    expect(linked.map((row) => row.customer_id)).toEqual([customers[0]?.id, customers[0]?.id]);
    // A post-purchase per new order, none for the stale one; the earlier checkout's recovery is cancelled by the order after it.
    expect((await postPurchases([o1, o2, o3, old])).map((job) => job.record_external_id).sort()).toEqual([o1, o2, o3, old].sort());
    const recovery = await server.db.selectFrom("automation_jobs").select(["status"]).where("flow", "=", "checkout_recovery").where("record_external_id", "=", checkout).execute();
    expect(recovery).toEqual([{ status: "cancelled" }]);
    expect(writtenOneByOne()).toEqual([]);
    const syncs = await server.db.selectFrom("automation_jobs").select("record_external_id").where("flow", "=", "contact_sync").where("record_external_id", "=", customerKey).execute();
    expect(syncs).toHaveLength(1);
  });

  it("store every field of a customer, order, checkout and shipment as its push alone does, through creation, merge and clearing", async () => {
    // Each record pushed twice: once alone to one store and once in a batch to another; both must read back the same.
    const other = await server.createTenant();
    const tags = ['quote"d', "brace}{", "back\\slash", "comma,semi;", "naïve 🎉", "NULL", " spaced "];
    const metadata = { nested: { list: [1, "two", null], quote: 'say "hi"' }, unicode: "Łódź" };
    const lineItems = [{ sku: "A-1", quantity: 2, price: 9.5, title: "Ünïcode" }];
    const [full, bare, merged, shipped] = [uid("o"), uid("o"), uid("o"), uid("s")];
    const customer = { phone: "+14155550199" };
    const rounds: Array<Array<[string, Record<string, unknown>]>> = [
      [
        ["orders", order(full, { currency: "usd", financial_status: "paid", fulfillment_status: "partial", tags, metadata, line_items: lineItems, source_updated_at: "2026-11-22T10:00:00Z" })],
        ["orders", order(bare, { total_price: 0 })],
        ["orders", order(merged, { tags: ["keep"], metadata: { keep: true }, line_items: lineItems, currency: "EUR" })],
        ["checkouts", { external_id: full, abandoned_at: "2026-11-22T09:00:00Z", total_price: 5, customer, currency: "gbp", recovery_url: "https://shop.example/r?a=1&b='2'", tags, metadata, line_items: lineItems }],
        ["checkouts", { external_id: merged, abandoned_at: "2026-11-22T09:00:00Z", total_price: 5, customer, tags: ["keep"], metadata: { keep: true } }],
        ["shipments", { external_id: shipped, order_external_id: full, status: "in_transit", carrier: "UPS", tracking_number: "1Z 999", tracking_url: "https://ups.example/t?n=1Z", metadata }],
        ["customers", { external_id: full, phone: "+14155550198", first_name: "Zoë", last_name: "O'Brien", email: "zoe@example.com", locale: "fr-CA", tags, lifetime_value: 12345, orders_count: 3, source_updated_at: "2026-11-22T10:00:00Z" }],
        ["customers", { phone: "+14155550197", first_name: "Phone only", tags: ["keep"] }],
      ],
      // Then: absent fields keep their value, null clears, present replaces.
      [
        ["orders", order(merged, { tags: null, metadata: null, total_price: 12.345 })],
        ["checkouts", { external_id: merged, abandoned_at: "2026-11-22T09:30:00Z", total_price: 6, customer, tags: null, metadata: null }],
        ["shipments", { external_id: shipped, order_external_id: full, status: "delivered", tracking_url: null }],
        ["customers", { external_id: full, phone: "+14155550198", tags: null, lifetime_value: null, email: null }],
      ],
    ];
    const read = async (storeId: number, key: string, resource: string, id: string) => {
      const res = await server.request("GET", `/api/v1/stores/${storeId}/${resource}/${id}`, { key });
      expect(res.status).toBe(200);
      // What differs between two stores by nature: the store, the times, the internal id of a shipment's order.
      const { store_id: _store, created_at: _created, updated_at: _updated, order_id: _order, ...fields } = res.body;
      return fields;
    };
    for (const round of rounds) {
      for (const [resource, item] of round) {
        const alone = await server.request("POST", `/api/v1/stores/${other.store.id}/${resource}`, { key: other.key, body: item });
        expect(alone.status, JSON.stringify(alone.body)).toBeLessThan(300);
      }
      for (const resource of ["customers", "orders", "checkouts", "shipments"]) {
        const res = await batch(resource, round.filter(([r]) => r === resource).map(([, item]) => item));
        expect(res.body.results.every((result: { status: number }) => result.status < 300), JSON.stringify(res.body)).toBe(true);
      }
    }
    const records: Array<[string, string]> = [["orders", full], ["orders", bare], ["orders", merged], ["checkouts", full], ["checkouts", merged], ["shipments", shipped], ["customers", full], ["customers", "+14155550197"]];
    for (const [resource, id] of records) expect(await read(tenant.store.id, tenant.key, resource, id)).toEqual(await read(other.store.id, other.key, resource, id));
    expect(await read(tenant.store.id, tenant.key, "orders", full)).toMatchObject({ currency: "USD", tags, metadata, line_items: lineItems, source_updated_at: "2026-11-22T10:00:00.000+00:00" });
    expect(await read(tenant.store.id, tenant.key, "orders", merged)).toMatchObject({ tags: [], metadata: null, line_items: lineItems, currency: "EUR", total_price: "12.35" });
    expect(await read(tenant.store.id, tenant.key, "checkouts", full)).toMatchObject({ currency: "GBP", tags, metadata, line_items: lineItems });
    expect(await read(tenant.store.id, tenant.key, "checkouts", merged)).toMatchObject({ tags: [], metadata: null, total_price: "6.00" });
    expect(await read(tenant.store.id, tenant.key, "customers", full)).toMatchObject({ first_name: "Zoë", last_name: "O'Brien", email: null, locale: "fr-CA", tags: [], lifetime_value: 0, orders_count: 3 });
    expect(await read(tenant.store.id, tenant.key, "customers", "+14155550197")).toMatchObject({ first_name: "Phone only", tags: ["keep"] });
    expect(await read(tenant.store.id, tenant.key, "shipments", shipped)).toMatchObject({ status: "delivered", carrier: "UPS", tracking_number: "1Z 999", tracking_url: null, metadata });
  });

  it("store lists, metadata and line items of many records of one shape, written by one statement, as their pushes alone do", async () => {
    const other = await server.createTenant();
    const awkward = ['quote"d', "back\\slash", "brace}{", "comma,semi;", "NULL", "naïve 🎉", ""];
    const many = (i: number) => ({
      tags: [awkward[i % awkward.length] ?? "", `t-${i}`],
      metadata: { note: awkward[(i + 1) % awkward.length], nested: { list: [i, "two", null], quote: 'say "hi"\\' } },
    });
    const ids = Array.from({ length: 4 }, () => uid("m"));
    const items: Array<[string, Array<Record<string, unknown>>]> = [
      ["customers", ids.map((id, i) => ({ external_id: id, phone: `+1415555${String(3000 + i)}`, first_name: awkward[i], tags: many(i).tags }))],
      ["orders", ids.map((id, i) => order(id, { ...many(i), line_items: [{ sku: awkward[i], quantity: i + 1, note: { deep: [awkward[i + 1]] } }] }))],
      ["checkouts", ids.map((id, i) => ({ external_id: id, abandoned_at: "2026-11-22T09:00:00Z", total_price: 5 + i, customer: { phone: "+14155550199" }, ...many(i), line_items: [{ title: awkward[i] }] }))],
      ["shipments", ids.map((id, i) => ({ external_id: id, order_external_id: id, status: "in_transit", tracking_number: awkward[i], metadata: many(i).metadata }))],
    ];
    const read = async (storeId: number, key: string, resource: string, id: string) => {
      const res = await server.request("GET", `/api/v1/stores/${storeId}/${resource}/${id}`, { key });
      expect(res.status).toBe(200);
      const { id: _id, store_id: _store, created_at: _created, updated_at: _updated, order_id: _order, ...fields } = res.body;
      return fields;
    };
    const before = writtenOneByOne().length;
    for (const [resource, records] of items) {
      for (const item of records) expect((await server.request("POST", `/api/v1/stores/${other.store.id}/${resource}`, { key: other.key, body: item })).status).toBeLessThan(300);
      const res = await batch(resource, records);
      expect(res.body.results.map((result: { status: number }) => result.status)).toEqual(records.map(() => 201));
    }
    // One statement per resource wrote its four records: none was written item by item.
    expect(writtenOneByOne().length).toBe(before);
    for (const [resource] of items) for (const id of ids) expect(await read(tenant.store.id, tenant.key, resource, id)).toEqual(await read(other.store.id, other.key, resource, id));
    for (const [index, id] of ids.entries()) {
      expect(await read(tenant.store.id, tenant.key, "orders", id)).toMatchObject({ ...many(index), line_items: [{ sku: awkward[index], quantity: index + 1, note: { deep: [awkward[index + 1]] } }] });
      expect(await read(tenant.store.id, tenant.key, "customers", id)).toMatchObject({ first_name: awkward[index] || null, tags: many(index).tags });
      expect(await read(tenant.store.id, tenant.key, "shipments", id)).toMatchObject({ tracking_number: awkward[index] || null, metadata: many(index).metadata });
    }
  });

  it("write customers together, as the same pushes one by one leave them: created, updated, stale, erased, keyed by phone", async () => {
    const [fresh, known, newer, erased] = [uid("c"), uid("c"), uid("c"), uid("c")];
    const phone = (n: number) => `+1415555${String(3000 + (seq % 900) * 10 + n).slice(-4)}`;
    const single = (body: unknown) => server.request("POST", `/api/v1/stores/${tenant.store.id}/customers`, { key: tenant.key, body });
    expect((await single({ external_id: known, phone: phone(1), first_name: "Old", tags: ["a"] })).status).toBe(201);
    expect((await single({ external_id: newer, phone: phone(2), first_name: "Newer", source_updated_at: "2026-11-22T12:00:00Z" })).status).toBe(201);
    expect((await single({ external_id: erased, phone: phone(3), first_name: "Gone" })).status).toBe(201);
    expect((await server.request("DELETE", `/api/v1/stores/${tenant.store.id}/customers/${erased}`, { key: tenant.key })).status).toBe(204);
    const phoneKeyed = phone(4);
    const res = await batch("customers", [
      { external_id: fresh, phone: phone(5), first_name: "Ada", lifetime_value: 1200 },
      { external_id: known, phone: phone(1), first_name: "New", orders_count: 2 },
      // Stale, with a phone of its own: a push of it alone writes nothing, not even the phone's contact.
      { external_id: newer, phone: phone(6), first_name: "Late", source_updated_at: "2026-11-22T11:00:00Z" },
      // Sent before the erasure: it must not bring the customer back, nor its phone.
      { external_id: erased, phone: phone(7), first_name: "Back", source_updated_at: "2020-01-01T00:00:00Z" },
      { phone: phoneKeyed, first_name: "Guest" },
      { external_id: "bad", phone: "not a phone" },
    ]);
    expect(res.status).toBe(200);
    expect(res.body.counts).toEqual({ created: 2, updated: 3, failed: 1 });
    expect(res.body.results).toEqual([
      { status: 201, external_id: fresh, record: expect.objectContaining({ first_name: "Ada", lifetime_value: 1200 }) },
      { status: 200, external_id: known, record: expect.objectContaining({ first_name: "New", tags: ["a"], orders_count: 2 }) },
      { status: 200, external_id: newer, stale: true, record: expect.objectContaining({ first_name: "Newer" }) },
      { status: 200, external_id: erased, stale: true, record: expect.objectContaining({ external_id: erased, first_name: null }) },
      { status: 201, external_id: null, record: expect.objectContaining({ external_id: phoneKeyed, first_name: "Guest" }) },
      expect.objectContaining({ status: 422, external_id: "bad" }),
    ]);
    const stored = await server.db.selectFrom("customers").select(["external_id", "first_name", "deleted_at"]).where("store_id", "=", tenant.store.id).where("external_id", "in", [fresh, known, newer, erased, phoneKeyed]).execute();
    expect(new Map(stored.map((row) => [row.external_id, row.first_name]))).toEqual(new Map([[fresh, "Ada"], [known, "New"], [newer, "Newer"], [erased, null], [phoneKeyed, "Guest"]]));
    const contacts = await server.db.selectFrom("contacts").select("phone").where("store_id", "=", tenant.store.id).where("phone", "in", [phone(6), phone(7)]).execute();
    expect(contacts).toEqual([]);
    // One contact sync per customer created or changed, as pushed alone; none for the stale or erased ones.
    expect(writtenOneByOne()).toEqual([]);
    const syncs = await server.db.selectFrom("automation_jobs").select("record_external_id").where("flow", "=", "contact_sync").where("store_id", "=", tenant.store.id).where("record_external_id", "in", [fresh, known, newer, erased]).execute();
    expect(syncs.map((job) => job.record_external_id).sort()).toEqual([fresh, known, known, newer].sort());
  });

  it("link each shipment of a batch to its own order, notify that order's customer, re-link a moved one and refuse one whose order is unknown", async () => {
    const orders = [uid("o"), uid("o"), uid("o")];
    const phones = ["+14155550181", "+14155550182", "+14155550183"];
    expect((await batch("orders", orders.map((id, i) => order(id, { customer: { phone: phones[i] } })))).status).toBe(200);
    const [s1, s2, s3, s4] = [uid("s"), uid("s"), uid("s"), uid("s")];
    const linked: Array<[string, string]> = [[s1, orders[1] ?? ""], [s2, orders[0] ?? ""], [s3, "no-such-order"], [s4, orders[2] ?? ""]];
    const res = await batch("shipments", linked.map(([id, orderId]) => ({ external_id: id, order_external_id: orderId, status: "in_transit" })));
    expect(res.body.results.map((r: { status: number; error?: string }) => [r.status, r.error ?? null])).toEqual([[201, null], [201, null], [422, "Order not found"], [201, null]]);
    const readBack = async (id: string) =>
      (await server.request("GET", `/api/v1/stores/${tenant.store.id}/shipments/${id}`, { key: tenant.key })).body as { order_external_id: string };
    for (const [id, orderId] of linked.filter(([id]) => id !== s3)) expect({ id, order: (await readBack(id)).order_external_id }).toEqual({ id, order: orderId });
    // Each notification goes to the customer of the shipment's own order.
    const notices = await server.db
      .selectFrom("automation_jobs as j")
      .innerJoin("shipments as s", "s.id", "j.record_id")
      .innerJoin("orders as o", "o.id", "s.order_id")
      .select(["j.record_external_id", "j.customer_id", "o.customer_id as order_customer_id", "o.external_id as order_external_id"])
      .where("j.flow", "=", "shipping_notification")
      .where("j.record_external_id", "in", [s1, s2, s4])
      .execute();
    expect(notices).toHaveLength(3);
    for (const notice of notices) expect(notice.customer_id).toBe(notice.order_customer_id);
    expect(new Map(notices.map((n) => [n.record_external_id, n.order_external_id]))).toEqual(new Map(linked.filter(([id]) => id !== s3)));
    // Pushed again with another order: re-linked.
    expect((await batch("shipments", [{ external_id: s1, order_external_id: orders[2], status: "in_transit" }])).body.results[0].status).toBe(200);
    expect((await readBack(s1)).order_external_id).toBe(orders[2]);
  });

  it("write checkouts and shipments together, as the same pushes one by one leave them", async () => {
    const before = writtenOneByOne().length;
    const at = (path: string) => `/api/v1/stores/${tenant.store.id}${path}`;
    const [fresh, reopened, recovered, newer] = [uid("k"), uid("k"), uid("k"), uid("k")];
    const checkout = (id: string, extra: Record<string, unknown> = {}) => ({ external_id: id, abandoned_at: "2026-11-22T09:00:00Z", total_price: 30, customer: { phone: "+14155550177" }, ...extra });
    expect((await batch("checkouts", [checkout(reopened), checkout(recovered), checkout(newer, { source_updated_at: "2026-11-22T12:00:00Z" })])).body.counts).toEqual({ created: 3, updated: 0, failed: 0 });
    await server.request("PATCH", at(`/checkouts/${reopened}`), { key: tenant.key, body: { status: "active" } });
    await server.request("PATCH", at(`/checkouts/${recovered}`), { key: tenant.key, body: { status: "recovered" } });
    const res = await batch("checkouts", [checkout(fresh), checkout(reopened), checkout(recovered, { total_price: 31 }), checkout(newer, { total_price: 99, source_updated_at: "2026-11-22T11:00:00Z" })]);
    expect(res.body.results.map((r: { status: number; stale?: boolean; record: { status: string; total_price: string } }) => [r.status, r.stale ?? false, r.record.status, r.record.total_price])).toEqual([
      [201, false, "abandoned", "30.00"],
      // Active again, then pushed: a new abandonment.
      [200, false, "abandoned", "30.00"],
      // A recovered checkout stays recovered.
      [200, false, "recovered", "31.00"],
      [200, true, "abandoned", "30.00"],
    ]);
    const recoveries = await server.db
      .selectFrom("automation_jobs")
      .select(["record_external_id", "payload"])
      .where("flow", "=", "checkout_recovery")
      .where("record_external_id", "in", [fresh, reopened, recovered, newer])
      .execute();
    // One recovery per abandonment: the first push of each, and the reopened one's second.
    expect(recoveries.map((job) => `${job.record_external_id}:${(job.payload as { abandonment: number }).abandonment}`).sort()).toEqual(
      [`${fresh}:1`, `${reopened}:1`, `${reopened}:2`, `${recovered}:1`, `${newer}:1`].sort(),
    );

    const orderId = uid("o");
    await batch("orders", [order(orderId)]);
    const [moving, staying, late] = [uid("s"), uid("s"), uid("s")];
    await batch("shipments", [
      { external_id: staying, order_external_id: orderId, status: "in_transit" },
      { external_id: late, order_external_id: orderId, status: "delivered", source_updated_at: "2026-11-22T12:00:00Z" },
    ]);
    const shipped = await batch("shipments", [
      { external_id: moving, order_external_id: orderId, status: "in_transit", carrier: "UPS" },
      { external_id: staying, order_external_id: orderId, status: "in_transit", tracking_number: "1Z" },
      { external_id: "lost", order_external_id: "no-such-order", status: "in_transit" },
      { external_id: late, order_external_id: orderId, status: "in_transit", source_updated_at: "2026-11-22T11:00:00Z" },
    ]);
    expect(shipped.body.results.map((r: { status: number; stale?: boolean; error?: string }) => [r.status, r.stale ?? false, r.error ?? null])).toEqual([
      [201, false, null],
      [200, false, null],
      [422, false, "Order not found"],
      [200, true, null],
    ]);
    expect(shipped.body.results[1].record).toMatchObject({ tracking_number: "1Z", status: "in_transit" });
    expect(shipped.body.results[3].record).toMatchObject({ status: "delivered" });
    const notices = await server.db.selectFrom("automation_jobs").select("dedupe_key").where("flow", "=", "shipping_notification").where("record_external_id", "in", [moving, staying, late, "lost"]).execute();
    // One per (shipment, status): the unchanged status and the stale write add none.
    expect(notices).toHaveLength(3);
    expect(await server.db.selectFrom("shipments").select("id").where("external_id", "=", "lost").execute()).toEqual([]);
    expect(writtenOneByOne().slice(before)).toEqual([]);
  });

  it("write checkouts with no source time in one statement: each schedules or cancels its recovery as pushed alone", async () => {
    const before = writtenOneByOne().length;
    const at = (path: string) => `/api/v1/stores/${tenant.store.id}${path}`;
    const checkout = (id: string, phone: string) => ({ external_id: id, abandoned_at: "2026-11-22T09:00:00Z", total_price: 30, customer: { phone, first_name: "Ada" } });
    const [fresh, sameBuyer, reopened, completed, expired] = [uid("k"), uid("k"), uid("k"), uid("k"), uid("k")];
    for (const [id, phone] of [[reopened, "+14155550181"], [completed, "+14155550182"], [expired, "+14155550183"]] as const) {
      expect((await server.request("POST", at("/checkouts"), { key: tenant.key, body: checkout(id, phone) })).status).toBe(201);
    }
    await server.request("PATCH", at(`/checkouts/${reopened}`), { key: tenant.key, body: { status: "active" } });
    // Left their abandonment while their recoveries stayed pending (a worker held them when they left).
    for (const [id, status] of [[completed, "completed"], [expired, "expired"]] as const) {
      await server.db.updateTable("checkouts").set({ status }).where("store_id", "=", tenant.store.id).where("external_id", "=", id).execute();
    }
    const res = await batch("checkouts", [checkout(fresh, "+14155550184"), checkout(sameBuyer, "+14155550184"), checkout(reopened, "+14155550181"), checkout(completed, "+14155550182"), checkout(expired, "+14155550183")]);
    expect(res.body.results.map((r: { status: number; record: { status: string } }) => [r.status, r.record.status])).toEqual([
      [201, "abandoned"],
      [201, "abandoned"],
      [200, "abandoned"],
      [200, "completed"],
      [200, "expired"],
    ]);
    const recoveries = async (id: string) =>
      (await server.db.selectFrom("automation_jobs").select(["status", "last_error", "payload"]).where("flow", "=", "checkout_recovery").where("record_external_id", "=", id).orderBy("id").execute()).map(
        (job) => [job.status, job.last_error, (job.payload as { abandonment: number }).abandonment],
      );
    expect(await recoveries(fresh)).toEqual([["pending", null, 1]]);
    expect(await recoveries(sameBuyer)).toEqual([["pending", null, 1]]);
    expect(await recoveries(reopened)).toEqual([
      ["cancelled", "the checkout became active", 1],
      ["pending", null, 2],
    ]);
    expect(await recoveries(completed)).toEqual([["cancelled", "the checkout became completed", 1]]);
    expect(await recoveries(expired)).toEqual([["cancelled", "the checkout became expired", 1]]);
    // The two checkouts of one buyer: one customer.
    const buyers = await server.db.selectFrom("checkouts").select("customer_id").where("external_id", "in", [fresh, sameBuyer]).execute();
    expect(new Set(buyers.map((row) => row.customer_id)).size).toBe(1);
    expect(writtenOneByOne().slice(before)).toEqual([]);
  });

  it("take shared contacts in one order: two batches whose customers' shapes meet their phones in opposite orders never deadlock", async () => {
    const retried = (reason: string) => retriesCounted(server, reason);
    const before = await retried("deadlock");
    for (let round = 0; round < 6; round++) {
      const p = (n: number) => `+1415556${String(1000 + (seq % 300) * 20 + n).slice(-4)}`;
      const [first, second] = [p(1), p(2)];
      // A named customer and a bare one are two statements; each batch meets the phones in the other's order.
      const item = (id: string, phone: string, named: boolean) => order(uid(id), { customer: named ? { phone, first_name: "Named" } : { phone } });
      const res = await Promise.all([
        batch("orders", [item("x", first, true), item("x", second, false)]),
        batch("orders", [item("y", second, true), item("y", first, false)]),
      ]);
      expect(res.map((r) => [r.status, r.body.counts])).toEqual([[200, { created: 2, updated: 0, failed: 0 }], [200, { created: 2, updated: 0, failed: 0 }]]);
      seq++;
    }
    expect(before).not.toBeNaN();
    expect(await retried("deadlock")).toBe(before);
  });

  it("record the same automations for a push alone as for the same push in a batch", async () => {
    const [alone, inBatch] = [await server.createTenant(), await server.createTenant()];
    const pushes = (n: number) => [
      { resource: "customers", body: { external_id: `c${n}`, phone: "+14155550131", first_name: "Ada", tags: ["vip"] } },
      { resource: "orders", body: { external_id: `o${n}`, placed_at: "2026-11-22T10:00:00Z", total_price: 12.5, customer: { external_id: `c${n}`, phone: "+14155550131", first_name: "Ada B." } } },
      { resource: "checkouts", body: { external_id: `k${n}`, abandoned_at: "2026-11-22T08:00:00Z", total_price: 3, customer: { phone: "+14155550132" } } },
      { resource: "orders", body: { external_id: `p${n}`, placed_at: "2026-11-22T11:00:00Z", total_price: 1, customer: { phone: "+14155550132" } } },
      { resource: "shipments", body: { external_id: `s${n}`, order_external_id: `o${n}`, status: "in_transit" } },
    ];
    for (const { resource, body } of pushes(1)) {
      expect((await server.request("POST", `/api/v1/stores/${alone.store.id}/${resource}`, { key: alone.key, body })).status).toBe(201);
      const res = await server.request("POST", `/api/v1/stores/${inBatch.store.id}/${resource}/batch`, { key: inBatch.key, body: { items: [body] } });
      expect(res.body.results[0].status).toBe(201);
    }
    const automations = async (storeId: number) => {
      const rows = await server.db.selectFrom("automation_jobs").select(["flow", "record_type", "record_external_id", "payload", "status", "dedupe_key"]).where("store_id", "=", storeId).orderBy("id").execute();
      // Keys name the store's own row ids: compared by their shape.
      return rows.map((row) => ({ ...row, dedupe_key: row.dedupe_key.replace(/\d+/g, "#") }));
    };
    const recorded = await automations(alone.store.id);
    expect(recorded.map((job) => `${job.flow}:${job.record_external_id}:${job.status}`)).toEqual([
      "contact_sync:c1:pending",
      // The order changed the customer's first name: a sync of its own.
      "contact_sync:c1:pending",
      "post_purchase:o1:pending",
      "contact_sync:+14155550132:pending",
      // The order after it cancels the checkout's recovery.
      "checkout_recovery:k1:cancelled",
      "post_purchase:p1:pending",
      "shipping_notification:s1:pending",
    ]);
    expect(await automations(inBatch.store.id)).toEqual(recorded);
  });

});
