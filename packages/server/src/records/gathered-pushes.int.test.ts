import { sql } from "kysely";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { ADMIN_TOKEN, refuseInserts, type TestServer, uid, withTestServer, type TestTenant } from "../../test/helpers.js";

// Single pushes to one store that arrive while earlier ones are being written
// are written together; each must still be answered and stored as if alone.

let server: TestServer;
let tenant: TestTenant;
const warnings: string[] = [];

withTestServer(
  (started, created) => {
    server = started;
    tenant = created;
  },
  { logger: pino({ level: "warn" }, { write: (line: string) => warnings.push(line) }) },
);

let seq = 0;
const phone = () => `+1415557${String(1000 + (seq++ % 9000)).slice(-4)}`;
const order = (id: string, extra: Record<string, unknown> = {}) => ({ external_id: id, placed_at: "2026-11-22T10:00:00Z", total_price: 10, customer: { phone: phone() }, ...extra });
const push = (resource: string, body: unknown) => server.request("POST", `/api/v1/stores/${tenant.store.id}/${resource}`, { key: tenant.key, body });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The process's gathering, from /metrics: writes that carried several pushes. */
async function gathering() {
  const text = (await server.request("GET", "/metrics", { key: ADMIN_TOKEN })).text;
  return { shared: Number(/^push_writes_total\{pushes="several"\} (\d+)/m.exec(text)?.[1] ?? "NaN") };
}

/**
 * Runs `pushes` while the store's two writes are under way and held up (a
 * transaction of the test's own holds the orders table), so that they wait
 * and are written together; answers their responses.
 */
async function whileBusy<T>(pushes: () => Promise<T>): Promise<T> {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let held!: () => void;
  const holding = new Promise<void>((resolve) => (held = resolve));
  const hold = server.db.transaction().execute(async (trx) => {
    await sql`lock table orders in share mode`.execute(trx);
    held();
    await released;
  });
  await holding;
  try {
    const first = [push("orders", order(uid("first"))), push("orders", order(uid("first")))];
    await sleep(100);
    const answered = pushes();
    await sleep(100);
    release();
    await hold;
    expect((await Promise.all(first)).map((res) => res.status)).toEqual([201, 201]);
    return await answered;
  } finally {
    release();
    await hold;
  }
}

const postPurchases = (ids: string[]) =>
  server.db.selectFrom("automation_jobs").select("record_external_id").where("store_id", "=", tenant.store.id).where("flow", "=", "post_purchase").where("record_external_id", "in", ids).execute();

describe("pushes that arrive together", () => {
  it("are written together, and each is answered, stored and triggers as if pushed alone", async () => {
    const existing = uid("o");
    expect((await push("orders", order(existing, { financial_status: "pending" }))).status).toBe(201);
    const fresh = Array.from({ length: 12 }, () => uid("o"));
    const [twice, stale] = [uid("o"), uid("o")];
    expect((await push("orders", order(stale, { source_updated_at: "2026-11-22T12:00:00Z", financial_status: "paid" }))).status).toBe(201);
    const before = await gathering();

    const [created, updated, repeated, older, refused] = await whileBusy(() =>
      Promise.all([
        Promise.all(fresh.map((id, i) => push("orders", order(id, { total_price: 10 + i })))),
        push("orders", order(existing, { financial_status: "paid" })),
        Promise.all([push("orders", order(twice, { financial_status: "pending" })), push("orders", order(twice, { financial_status: "paid" }))]),
        push("orders", order(stale, { source_updated_at: "2026-11-22T11:00:00Z", financial_status: "refunded" })),
        push("orders", { external_id: uid("bad"), placed_at: "yesterday", total_price: 1, customer: { phone: phone() } }),
      ]),
    );

    const after = await gathering();
    // They were gathered (the database was held while they arrived); how many went together is the machine's business.
    expect(after.shared).toBeGreaterThan(before.shared);

    // Each its own answer: its status, its record.
    expect(created.map((res) => [res.status, res.body.external_id, res.body.total_price])).toEqual(fresh.map((id, i) => [201, id, `${10 + i}.00`]));
    expect([updated.status, updated.body.financial_status]).toEqual([200, "paid"]);
    // One key pushed twice at once: both applied, one after the other, one created.
    expect(repeated.map((res) => res.status).sort()).toEqual([200, 201]);
    expect([older.status, older.headers.get("x-stale-write"), older.body.financial_status]).toEqual([200, "ignored", "paid"]);
    expect([refused.status, refused.body.error]).toEqual([422, "Invalid request body"]);

    const stored = await server.db.selectFrom("orders").select(["external_id", "financial_status"]).where("store_id", "=", tenant.store.id).where("external_id", "in", [...fresh, twice]).execute();
    expect(stored.map((row) => row.external_id).sort()).toEqual([...fresh, twice].sort());
    // One post-purchase per new order; none for the update, the stale write or the repeat.
    expect((await postPurchases([...fresh, twice, existing, stale])).map((job) => job.record_external_id).sort()).toEqual([...fresh, twice, existing, stale].sort());
  });

  it("apply pushes of one key in the order they arrived, one after the other", async () => {
    const id = uid("o");
    const statuses = ["pending", "paid", "refunded"];
    const responses = await whileBusy(async () => {
      const sent = [];
      for (const status of statuses) {
        sent.push(push("orders", order(id, { financial_status: status })));
        await sleep(20);
      }
      return Promise.all(sent);
    });
    expect(responses.map((res) => [res.status, res.body.financial_status])).toEqual([
      [201, "pending"],
      [200, "paid"],
      [200, "refunded"],
    ]);
    const stored = await server.db.selectFrom("orders").select("financial_status").where("store_id", "=", tenant.store.id).where("external_id", "=", id).execute();
    expect(stored).toEqual([{ financial_status: "refunded" }]);
    expect(await postPurchases([id])).toHaveLength(1);
  });

  it("give a failure of one push's own to that push alone", async () => {
    const ids = Array.from({ length: 5 }, () => uid("o"));
    const broken = uid("boom");
    const allow = await refuseInserts(server.db, "orders", "boom-");
    const written = warnings.length;
    try {
      const responses = await whileBusy(() => Promise.all([...ids, broken].map((id) => push("orders", order(id)))));
      expect(responses.map((res) => res.status)).toEqual([201, 201, 201, 201, 201, 500]);
      expect(responses.at(-1)?.body).toEqual({ error: "Internal server error", code: "internal_error" });
    } finally {
      await allow();
    }
    expect(warnings.slice(written).some((line) => line.includes("pushes written one by one"))).toBe(true);
    const stored = await server.db.selectFrom("orders").select("external_id").where("external_id", "in", [...ids, broken]).execute();
    expect(stored.map((row) => row.external_id).sort()).toEqual([...ids].sort());
    expect((await postPurchases([...ids, broken])).map((job) => job.record_external_id).sort()).toEqual([...ids].sort());
  });

  it("answer 503 to every push of a write the database fails, and store none of it", async () => {
    const ids = Array.from({ length: 4 }, () => uid("o"));
    const failing = uid("down");
    const restore = await refuseInserts(server.db, "orders", "down-", "57P01");
    try {
      const responses = await whileBusy(() => Promise.all([...ids, failing].map((id) => push("orders", order(id)))));
      expect(responses.map((res) => [res.status, res.body.error])).toEqual(Array.from({ length: 5 }, () => [503, "Service unavailable"]));
    } finally {
      await restore();
    }
    expect(await server.db.selectFrom("orders").select("id").where("external_id", "in", [...ids, failing]).execute()).toEqual([]);
    expect(await postPurchases([...ids, failing])).toEqual([]);
  });
});
