import { describe, expect, it } from "vitest";
import { refuseInserts } from "../../test/helpers.js";
import { checkout, count, order, patch, post, server, tenant, uid, withRecordsServer } from "../../test/records.js";

withRecordsServer();

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
