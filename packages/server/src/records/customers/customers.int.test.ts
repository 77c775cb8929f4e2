import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../../../test/helpers.js";
import { writeCustomers } from "./customer.repository.js";

let server: TestServer;
let tenant: Awaited<ReturnType<TestServer["createTenant"]>>;
let path: string;

beforeAll(async () => {
  server = await startTestServer();
  tenant = await server.createTenant({ country: "US" });
  path = `/api/v1/stores/${tenant.store.id}/customers`;
});
afterAll(() => server?.close());

const upsert = (body: unknown, key = tenant.key) => server.request("POST", path, { key, body });
let seq = 0;
const uniqueId = (prefix = "c") => `${prefix}-${Date.now()}-${++seq}`;

async function storedCustomers(externalId: string) {
  return server.db.selectFrom("customers").selectAll().where("store_id", "=", tenant.store.id).where("external_id", "=", externalId).execute();
}

describe("customer upsert", () => {
  it("creates with 201, then updates with 200, returning exactly the documented fields", async () => {
    const id = uniqueId();
    const body = { external_id: id, phone: "+14155552671", first_name: "Ada", last_name: "Lovelace", email: "ada@example.com", locale: "en-GB", tags: ["vip"], lifetime_value: 1200, orders_count: 3 };
    const first = await upsert(body);
    expect(first.status).toBe(201);
    expect(first.body).toEqual({ external_id: id, store_id: tenant.store.id, first_name: "Ada", last_name: "Lovelace", email: "ada@example.com", locale: "en-GB", tags: ["vip"], lifetime_value: 1200, orders_count: 3 });
    const second = await upsert(body);
    expect(second.status).toBe(200);
    expect(second.body).toEqual(first.body);
    expect(await storedCustomers(id)).toHaveLength(1);
  });

  it("leaves a customer a re-push would not change as it is: same answer, updated_at kept, no new row version", async () => {
    const id = uniqueId();
    const body = { external_id: id, phone: "+14155552671", first_name: "Ada", tags: ["vip"], source_updated_at: "2026-11-20T10:00:00Z" };
    await upsert(body);
    const version = async () => (await sql<{ xmin: string }>`select xmin::text from customers where store_id = ${tenant.store.id} and external_id = ${id}`.execute(server.db)).rows[0]?.xmin;
    const [stored] = await storedCustomers(id);
    const written = await version();
    const again = await upsert(body);
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ external_id: id, first_name: "Ada", tags: ["vip"] });
    const [kept] = await storedCustomers(id);
    expect(kept?.updated_at).toEqual(stored?.updated_at);
    expect(kept?.profile_version).toBe(stored?.profile_version);
    expect(await version()).toBe(written);
    // The same fields with a later source time are a change: the customer is written again.
    const later = await upsert({ ...body, source_updated_at: "2026-11-21T10:00:00Z" });
    expect(later.status).toBe(200);
    const [changed] = await storedCustomers(id);
    expect(changed?.updated_at.getTime()).toBeGreaterThan(stored?.updated_at.getTime() ?? Infinity);
    expect(await version()).not.toBe(written);
  });

  it("writes many customers carrying lists in one statement, leaving those it would not change as stored", async () => {
    const [a, b] = [uniqueId("many"), uniqueId("many")];
    const write = (external_id: string, tags: string[]) => ({ key: { external_id, keyed_by_phone: false }, fields: { phone: "+14155550123", first_name: "Many", tags } });
    const first = await writeCustomers(server.db, { storeId: tenant.store.id, writes: [write(a, ["x"]), write(b, ["y", "z"])], backfill: false, strict: true });
    expect(first.map((row) => [row.external_id, row.tags, row.inserted])).toEqual(expect.arrayContaining([[a, ["x"], true], [b, ["y", "z"], true]]));
    const [storedA, storedB] = [(await storedCustomers(a))[0], (await storedCustomers(b))[0]];
    const again = await writeCustomers(server.db, { storeId: tenant.store.id, writes: [write(a, ["x"]), write(b, ["w"])], backfill: false, strict: true });
    const byKey = new Map(again.map((row) => [row.external_id, row]));
    expect(byKey.get(a)).toMatchObject({ tags: ["x"], inserted: false });
    expect(byKey.get(b)).toMatchObject({ tags: ["w"], inserted: false });
    // The one it would not change is left as stored: not written again, its profile the same.
    const [afterA, afterB] = [(await storedCustomers(a))[0], (await storedCustomers(b))[0]];
    expect([afterA?.updated_at, afterA?.profile_version, afterA?.profile_changed]).toEqual([storedA?.updated_at, storedA?.profile_version, storedA?.profile_changed]);
    expect([afterB?.tags, afterB?.profile_version, afterB?.profile_changed]).toEqual([["w"], (storedB?.profile_version ?? 0) + 1, true]);
  });

  it("merges: absent fields keep their value, present ones replace, null clears", async () => {
    const id = uniqueId();
    await upsert({ external_id: id, phone: "+14155552671", first_name: "Ada", last_name: "Lovelace", email: "ada@example.com", locale: "en", tags: ["a", "b"], lifetime_value: 10, orders_count: 2 });
    const merged = await upsert({ external_id: id, phone: "+14155552671", first_name: "Augusta" });
    expect(merged.status).toBe(200);
    expect(merged.body).toMatchObject({ first_name: "Augusta", last_name: "Lovelace", email: "ada@example.com", locale: "en", tags: ["a", "b"], lifetime_value: 10, orders_count: 2 });
    const cleared = await upsert({ external_id: id, phone: "+14155552671", last_name: null, email: null, locale: null, tags: null, lifetime_value: null, orders_count: null });
    expect(cleared.body).toMatchObject({ first_name: "Augusta", last_name: null, email: null, locale: null, tags: [], lifetime_value: 0, orders_count: 0 });
    const [row] = await storedCustomers(id);
    expect(row).toMatchObject({ first_name: "Augusta", last_name: null, email: null, tags: [] });
  });

  it("stores tags in order with repeats removed", async () => {
    const res = await upsert({ external_id: uniqueId(), phone: "+14155552671", tags: ["b", "a", "b", "c", "a"] });
    expect(res.body.tags).toEqual(["b", "a", "c"]);
  });

  it("ignores unknown fields and never stores them", async () => {
    const id = uniqueId();
    const res = await upsert({ external_id: id, phone: "+14155552671", favourite_colour: "blue", store_id: 999999 });
    expect(res.status).toBe(201);
    expect(res.body).not.toHaveProperty("favourite_colour");
    expect(res.body.store_id).toBe(tenant.store.id);
  });

  it("keys a customer without external_id by its E.164 phone", async () => {
    const national = await upsert({ phone: "(415) 555-2690", first_name: "Grace" });
    expect(national.status).toBe(201);
    expect(national.body.external_id).toBe("+14155552690");
    const international = await upsert({ phone: "+1 415 555 2690", last_name: "Hopper" });
    expect(international.status).toBe(200);
    expect(international.body).toMatchObject({ external_id: "+14155552690", first_name: "Grace", last_name: "Hopper" });
  });
});

describe("customer field bounds", () => {
  const long = (n: number) => "x".repeat(n);
  const cases: Array<[string, Record<string, unknown>, boolean]> = [
    ["external_id of 255 chars", { external_id: long(255) }, true],
    ["external_id of 256 chars", { external_id: long(256) }, false],
    ["empty external_id", { external_id: "" }, false],
    ["first_name of 255 chars", { first_name: long(255) }, true],
    ["first_name of 256 chars", { first_name: long(256) }, false],
    ["last_name of 255 chars", { last_name: long(255) }, true],
    ["last_name of 256 chars", { last_name: long(256) }, false],
    ["email of 255 chars", { email: `${long(243)}@example.com` }, true],
    ["email of 256 chars", { email: `${long(244)}@example.com` }, false],
    ["email without @", { email: "not-an-email" }, false],
    ["locale of 10 chars", { locale: "zh-Hant-TW" }, true],
    ["locale of 11 chars", { locale: "zh-Hant-TWX" }, false],
    ["lifetime_value 0", { lifetime_value: 0 }, true],
    ["negative lifetime_value", { lifetime_value: -1 }, false],
    ["fractional lifetime_value", { lifetime_value: 1.5 }, false],
    ["lifetime_value as a string", { lifetime_value: "5" }, false],
    ["negative orders_count", { orders_count: -3 }, false],
    ["fractional orders_count", { orders_count: 0.5 }, false],
    ["250 tags", { tags: Array.from({ length: 250 }, (_, i) => `t${i}`) }, true],
    ["251 tags", { tags: Array.from({ length: 251 }, (_, i) => `t${i}`) }, false],
    ["a tag of 255 chars", { tags: [long(255)] }, true],
    ["a tag of 256 chars", { tags: [long(256)] }, false],
    ["an empty tag", { tags: [""] }, false],
    ["tags that are not strings", { tags: [1] }, false],
  ];

  for (const [name, fields, accepted] of cases) {
    it(`${accepted ? "accepts" : "refuses"} ${name}`, async () => {
      const field = Object.keys(fields)[0] ?? "";
      const body = { external_id: uniqueId("bound"), phone: "+14155552671", ...fields };
      const res = await upsert(body);
      if (accepted) {
        expect(res.status).toBe(201);
      } else {
        expect(res.status).toBe(422);
        expect(res.body.error).toBe("Invalid request body");
        expect(res.body.details.map((d: { path: string }) => d.path.split(".")[0])).toContain(field);
        expect(Object.keys(res.body).sort()).toEqual(["code", "details", "error"]);
        const externalId = typeof body.external_id === "string" ? body.external_id : "";
        expect(await storedCustomers(externalId)).toHaveLength(0);
      }
    });
  }

  it("names every failing field at once, with dotted paths", async () => {
    const res = await upsert({ external_id: 5, email: "x", tags: ["ok", ""] });
    expect(res.status).toBe(422);
    expect(res.body.details).toEqual(
      expect.arrayContaining([
        { path: "external_id", message: "must be a string" },
        { path: "phone", message: "is required" },
        { path: "email", message: "must be a valid e-mail address" },
        { path: "tags.1", message: "must not be empty" },
      ]),
    );
  });
});

describe("phone numbers to E.164", () => {
  it("reports an impossible phone together with the other failing fields", async () => {
    const res = await upsert({ external_id: uniqueId(), phone: "+1 555 000 0000", email: "nope", locale: "x".repeat(11) });
    expect(res.status).toBe(422);
    expect(res.body.details.map((d: { path: string }) => d.path).sort()).toEqual(["email", "locale", "phone"]);
  });

  it("reads a national number in the store's default country", async () => {
    const res = await upsert({ phone: "415-555-2671" });
    expect(res.body.external_id).toBe("+14155552671");
  });

  it("refuses a national number when the store has no default country", async () => {
    const other = await server.createTenant({ country: null });
    const res = await server.request("POST", `/api/v1/stores/${other.store.id}/customers`, { key: other.key, body: { phone: "415-555-2671" } });
    expect(res.status).toBe(422);
    expect(res.body.details).toEqual([{ path: "phone", message: expect.stringContaining("international format") }]);
    const international = await server.request("POST", `/api/v1/stores/${other.store.id}/customers`, { key: other.key, body: { phone: "+44 20 7946 0958" } });
    expect(international.status).toBe(201);
    expect(international.body.external_id).toBe("+442079460958");
  });

  it("reads a number of another country when it starts with +", async () => {
    const res = await upsert({ phone: "+33 6 12 34 56 78" });
    expect(res.body.external_id).toBe("+33612345678");
  });

  for (const phone of ["+1 555 000 0000", "+99912345", "12", "not a phone", "+1415555267199999"]) {
    it(`refuses the impossible number ${JSON.stringify(phone)}`, async () => {
      const res = await upsert({ external_id: uniqueId("bad-phone"), phone });
      expect(res.status).toBe(422);
      expect(res.body).toEqual({ error: "Invalid request body", code: "validation_failed", details: [{ path: "phone", message: expect.any(String) }] });
    });
  }

  it("links customers to one messaging contact per phone", async () => {
    const a = uniqueId("contact-a");
    const b = uniqueId("contact-b");
    await upsert({ external_id: a, phone: "+14155550199" });
    await upsert({ external_id: b, phone: "415 555 0199" });
    const rows = await server.db
      .selectFrom("customers")
      .select(["external_id", "contact_id"])
      .where("store_id", "=", tenant.store.id)
      .where("external_id", "in", [a, b])
      .execute();
    expect(rows).toHaveLength(2);
    expect(rows[0]?.contact_id).not.toBeNull();
    expect(rows[0]?.contact_id).toBe(rows[1]?.contact_id);
    const contacts = await server.db.selectFrom("contacts").selectAll().where("store_id", "=", tenant.store.id).where("phone", "=", "+14155550199").execute();
    expect(contacts).toHaveLength(1);
  });
});

describe("customer erasure", () => {
  const erase = (externalId: string) => server.request("DELETE", `${path}/${encodeURIComponent(externalId)}`, { key: tenant.key });

  it("answers 204 with no body for a customer that exists, is already erased, or was never known", async () => {
    const id = uniqueId("erase");
    await upsert({ external_id: id, phone: "+14155552671", first_name: "Ada" });
    const first = await erase(id);
    expect(first.status).toBe(204);
    expect(first.text).toBe("");
    expect((await erase(id)).status).toBe(204);
    expect((await erase(uniqueId("never"))).status).toBe(204);
  });

  it("clears personal fields and the phone, and re-upsert creates the customer anew", async () => {
    const id = uniqueId("erase");
    await upsert({ external_id: id, phone: "+14155552672", first_name: "Ada", last_name: "L", email: "a@example.com", locale: "en", tags: ["x"], lifetime_value: 99, orders_count: 4 });
    await erase(id);
    const [erased] = await storedCustomers(id);
    expect(erased).toMatchObject({ first_name: null, last_name: null, email: null, locale: null, tags: [], phone: null, contact_id: null });
    expect(erased?.deleted_at).toBeInstanceOf(Date);

    const again = await upsert({ external_id: id, phone: "+14155552672" });
    expect(again.status).toBe(201);
    expect(again.body).toMatchObject({ first_name: null, email: null, tags: [], lifetime_value: 0, orders_count: 0 });
    const rows = await storedCustomers(id);
    expect(rows.filter((row) => row.deleted_at === null)).toHaveLength(1);
  });

  it("erases a phone-keyed customer named by its URL-encoded E.164 phone, keeping no copy of the phone", async () => {
    const created = await upsert({ phone: "+14155552673", first_name: "Phone" });
    expect(created.body.external_id).toBe("+14155552673");
    expect((await erase("+14155552673")).status).toBe(204);
    expect(await storedCustomers("+14155552673")).toHaveLength(0);
    const contact = await server.db.selectFrom("contacts").selectAll().where("store_id", "=", tenant.store.id).where("phone", "=", "+14155552673").execute();
    expect(contact).toHaveLength(0);
    expect((await upsert({ phone: "+14155552673" })).status).toBe(201);
  });

  it("round-trips external ids with reserved and non-ASCII characters", async () => {
    const id = `a/b c?d#e%f+ü-${uniqueId()}`;
    expect((await upsert({ external_id: id, phone: "+14155552674" })).status).toBe(201);
    expect((await erase(id)).status).toBe(204);
    const [row] = await storedCustomers(id);
    expect(row?.deleted_at).toBeInstanceOf(Date);
  });
});

describe("concurrency", () => {
  it("16 concurrent creates of one new phone-keyed customer give one 201, no 5xx, one row", async () => {
    const phone = "+14155559876";
    const responses = await Promise.all(Array.from({ length: 16 }, () => upsert({ phone, first_name: "Race" })));
    const statuses = responses.map((res) => res.status);
    expect(statuses.filter((status) => status === 201)).toHaveLength(1);
    expect(statuses.filter((status) => status === 200)).toHaveLength(15);
    expect(await storedCustomers(phone)).toHaveLength(1);
    const contacts = await server.db.selectFrom("contacts").selectAll().where("store_id", "=", tenant.store.id).where("phone", "=", phone).execute();
    expect(contacts).toHaveLength(1);
  });
});
