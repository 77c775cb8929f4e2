import { sql } from "kysely";
import { afterEach, describe, expect, it } from "vitest";
import { metricValue, refuseInserts, type TestServer, uid, withTestServer, type TestTenant, warningsInto } from "../../test/helpers.js";
import { gathered } from "./gathered.js";
import { WRITES_PER_LANE } from "./procedures.js";

// Single pushes to one store that arrive while earlier ones are being written
// are written together; each must still be answered and stored as if alone.

let server: TestServer;
let tenant: TestTenant;
const warnings: string[] = [];

withTestServer((started, created) => ([server, tenant] = [started, created]), { logger: warningsInto(warnings) });

let seq = 0;
const phone = () => `+1415557${String(1000 + (seq++ % 9000)).slice(-4)}`;
const order = (id: string, extra: Record<string, unknown> = {}) => ({ external_id: id, placed_at: "2026-11-22T10:00:00Z", total_price: 10, customer: { phone: phone() }, ...extra });
const push = (resource: string, body: unknown) => server.request("POST", `/api/v1/stores/${tenant.store.id}/${resource}`, { key: tenant.key, body });

/** The process's gathering, from /metrics: writes that carried several pushes. */
async function gathering() {
  return { shared: await metricValue(server, 'push_writes_total{pushes="several"}') };
}

/**
 * Waits until the server process (this one) has started `writes` writes of
 * pushes and holds `waiting` pushes for the next: read from its own figures,
 * as /metrics would show them, since a scrape reads the database the test holds.
 * The suite's test deadline (120 s) is beyond this wait, so a wait that fails says which.
 */
const until = (figure: "writes" | "waiting", atLeast: number) =>
  expect
    .poll(() => gathered[figure], {
      timeout: 60_000,
      interval: 10,
      // With the key cache's figures: a push that missed it needs the database the test holds.
      message: `${figure} to reach ${atLeast} (when the wait began: ${JSON.stringify(gathered)}, key cache: ${JSON.stringify({ live: server.accessCache.live, hits: server.accessCache.hits, misses: server.accessCache.misses })})`,
    })
    .toBeGreaterThanOrEqual(atLeast);

/** The hold of a test that ended without letting it go (it failed): let go before the next, so one failure stays one. */
let letGo: (() => Promise<void>) | undefined;
afterEach(async () => {
  await letGo?.();
  letGo = undefined;
});

/**
 * Runs `pushes` while the store's writes are under way and held up (a
 * transaction of the test's own holds the orders table), and lets them go
 * once `waiting` of them wait for those writes, so that they are written
 * together whatever the machine's speed; answers their responses.
 */
async function whileBusy<T>(waiting: number, pushes: () => Promise<T>): Promise<T> {
  // The key's access read now, so no push of the test needs the database while it is held (the embedded one has
  // one connection, which the hold takes whole).
  expect((await server.request("GET", `/api/v1/stores/${tenant.store.id}/orders?limit=1`, { key: tenant.key })).status).toBe(200);
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
  letGo = async () => {
    release();
    await hold;
  };
  try {
    // As many writes of the store as may run at once under way and held up, one push each (sent together, two
    // pushes could share one), then the pushes arrive and wait for them.
    const started = gathered.writes;
    const first: Array<ReturnType<typeof push>> = [];
    for (let write = 1; write <= WRITES_PER_LANE; write++) {
      first.push(push("orders", order(uid("first"))));
      await until("writes", started + write);
    }
    const answered = pushes();
    await until("waiting", waiting);
    release();
    await hold;
    expect((await Promise.all(first)).map((res) => res.status)).toEqual(Array.from({ length: WRITES_PER_LANE }, () => 201));
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

    // All but the refused one wait: 12 new orders, the update, the key pushed twice, the stale write.
    const [created, updated, repeated, older, refused] = await whileBusy(16, () =>
      Promise.all([
        Promise.all(fresh.map((id, i) => push("orders", order(id, { total_price: 10 + i })))),
        push("orders", order(existing, { financial_status: "paid" })),
        Promise.all([push("orders", order(twice, { financial_status: "pending" })), push("orders", order(twice, { financial_status: "paid" }))]),
        push("orders", order(stale, { source_updated_at: "2026-11-22T11:00:00Z", financial_status: "refunded" })),
        push("orders", { external_id: uid("bad"), placed_at: "yesterday", total_price: 1, customer: { phone: phone() } }),
      ]),
    );

    // They waited together, so they were written together.
    expect((await gathering()).shared).toBeGreaterThan(before.shared);

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
    const responses = await whileBusy(3, async () => {
      const sent = [];
      // Each sent once the one before it has arrived: the order they arrived in is the order they were sent in.
      // The last one's arrival is what the hold waits for, and the writes go at once then: a second wait
      // for it here could poll only after they went, and wait for good.
      for (const [i, status] of statuses.entries()) {
        sent.push(push("orders", order(id, { financial_status: status })));
        if (i < statuses.length - 1) await until("waiting", i + 1);
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
      const responses = await whileBusy(6, () => Promise.all([...ids, broken].map((id) => push("orders", order(id)))));
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
      const responses = await whileBusy(5, () => Promise.all([...ids, failing].map((id) => push("orders", order(id)))));
      expect(responses.map((res) => [res.status, res.body.error])).toEqual(Array.from({ length: 5 }, () => [503, "Service unavailable"]));
    } finally {
      await restore();
    }
    expect(await server.db.selectFrom("orders").select("id").where("external_id", "in", [...ids, failing]).execute()).toEqual([]);
    expect(await postPurchases([...ids, failing])).toEqual([]);
  });
});
