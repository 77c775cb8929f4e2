import { describe, expect, it } from "vitest";
import { checkout, count, OFFSET_TIMESTAMP, patch, post, server, tenant, uid, withRecordsServer } from "../../../test/records.js";

withRecordsServer();

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
