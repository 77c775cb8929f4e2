import { CompiledQuery, sql } from "kysely";
import { describe, expect, it } from "vitest";
import { cancelRecoveriesForOrderRows, cancelRecoveriesForWrittenOrders, cancelRecoveriesOfLeftCheckouts, MOST_ORDERS_BY_ID } from "./index.js";
import { checkout, delayed, jobsFor, messagesFor, newPhone, order, patch, push, server, settled, sqlLiteral, withAutomationServer, withOneStore } from "../../../test/automations.js";
import { testDb, uid } from "../../../test/helpers.js";

withAutomationServer();

describe("checkout recovery", () => {
  it("with delay 0, sends the recovery message carrying the recovery URL", async () => {
    const body = checkout(newPhone());
    expect((await push("checkouts", body)).status).toBe(201);
    await settled();
    const messages = await messagesFor("checkout_recovery", body.external_id);
    expect(messages).toHaveLength(1);
    expect(messages[0]?.content).toMatchObject({ template: "checkout_recovery", checkout: { recovery_url: "https://shop.example/recover/xyz", total_price: "80.00" } });
  });

  it("waits the store's delay, 60 minutes by default", async () => {
    const body = checkout(newPhone());
    await push("checkouts", body, delayed);
    const [job] = await jobsFor("checkout_recovery", body.external_id);
    expect(job?.status).toBe("pending");
    const delaySeconds = ((job?.run_at.getTime() ?? 0) - (job?.created_at.getTime() ?? 0)) / 1000;
    expect(delaySeconds).toBeCloseTo(3600, 0);
  });

  it("fires once per abandonment: a re-push of an abandoned checkout adds nothing, a new abandonment adds one", async () => {
    const body = checkout(newPhone());
    await push("checkouts", body);
    await push("checkouts", body);
    await settled();
    expect(await jobsFor("checkout_recovery", body.external_id)).toHaveLength(1);
    await patch("checkouts", body.external_id, { status: "active" });
    await push("checkouts", body);
    await settled();
    expect(await messagesFor("checkout_recovery", body.external_id)).toHaveLength(2);
  });

  for (const state of ["recovered", "completed", "expired"]) {
    it(`is cancelled when the checkout becomes ${state}`, async () => {
      const body = checkout(newPhone());
      await push("checkouts", body, delayed);
      await patch("checkouts", body.external_id, { status: state }, delayed);
      const [job] = await jobsFor("checkout_recovery", body.external_id);
      expect(job).toMatchObject({ status: "cancelled", last_error: `the checkout became ${state}` });
      expect(await messagesFor("checkout_recovery", body.external_id)).toHaveLength(0);
    });
  }

  it("follows PATCHes of the status: leaving abandoned cancels, entering it again schedules one more, an older PATCH changes nothing", async () => {
    const body = checkout(newPhone(), { source_updated_at: "2026-11-22T09:00:00Z" });
    await push("checkouts", body, delayed);
    // Already abandoned: nothing new.
    expect((await patch("checkouts", body.external_id, { status: "abandoned", tags: ["again"] }, delayed)).status).toBe(200);
    expect(await jobsFor("checkout_recovery", body.external_id)).toMatchObject([{ status: "pending", payload: { abandonment: 1 } }]);
    expect((await patch("checkouts", body.external_id, { status: "active" }, delayed)).body.status).toBe("active");
    expect(await jobsFor("checkout_recovery", body.external_id)).toMatchObject([{ status: "cancelled", last_error: "the checkout became active" }]);
    expect((await patch("checkouts", body.external_id, { status: "abandoned" }, delayed)).body.status).toBe("abandoned");
    const [, again] = await jobsFor("checkout_recovery", body.external_id);
    expect(again).toMatchObject({ status: "pending", payload: { abandonment: 2 }, dedupe_key: expect.stringMatching(/:2$/) });
    const delaySeconds = ((again?.run_at.getTime() ?? 0) - (again?.created_at.getTime() ?? 0)) / 1000;
    expect(delaySeconds).toBeCloseTo(3600, 0);
    // Older than the stored checkout: answered with the stored one, and its recovery stays pending.
    const older = await server.request("PATCH", `/api/v1/stores/${delayed.store.id}/checkouts/${body.external_id}`, {
      key: delayed.key,
      body: { status: "completed", source_updated_at: "2026-11-22T08:00:00Z" },
    });
    expect([older.status, older.headers.get("x-stale-write"), older.body.status]).toEqual([200, "ignored", "abandoned"]);
    expect((await jobsFor("checkout_recovery", body.external_id)).map((job) => job.status)).toEqual(["cancelled", "pending"]);
  });

  it("is cancelled by the customer's order that changes its phone, pushed alone or in a batch with other orders", async () => {
    // A batch whose customers carry one set of fields is one statement; two sets, one statement each.
    // Up to 50 orders, the checkouts are gathered by order; a larger batch groups its orders by contact.
    for (const how of ["alone", "in a batch", "in a batch of two sets of customer fields", "in a batch of 60", "in a batch of 60 of two sets of customer fields"]) {
      const account = uid("acct");
      const body = checkout(newPhone(), { customer: { external_id: account, phone: newPhone() } });
      await push("checkouts", body, delayed);
      expect((await jobsFor("checkout_recovery", body.external_id))[0]?.status).toBe("pending");
      // The same customer orders after abandoning, from a new phone: its contact is another.
      const placed = order(newPhone(), { placed_at: "2026-11-22T09:30:00Z" });
      const ordered = { ...placed, customer: { ...placed.customer, external_id: account } };
      const other = order(newPhone());
      if (how === "alone") expect((await push("orders", ordered, delayed)).status).toBe(201);
      else if (how === "in a batch") expect((await push("orders/batch", { items: [other, ordered] }, delayed)).status).toBe(200);
      else if (how === "in a batch of 60") expect((await push("orders/batch", { items: [...Array.from({ length: 59 }, () => order(newPhone())), ordered] }, delayed)).status).toBe(200);
      else if (how === "in a batch of 60 of two sets of customer fields") {
        const others = Array.from({ length: 59 }, () => order(newPhone()));
        const items = [...others.map((o) => ({ ...o, customer: { ...o.customer, last_name: "Other" } })), ordered];
        expect((await push("orders/batch", { items }, delayed)).status).toBe(200);
      } else expect((await push("orders/batch", { items: [{ ...other, customer: { ...other.customer, last_name: "Other" } }, ordered] }, delayed)).status).toBe(200);
      expect({ how, job: (await jobsFor("checkout_recovery", body.external_id))[0] }).toMatchObject({ how, job: { status: "cancelled", last_error: "the customer placed an order after abandoning the checkout" } });
    }
  });

  it("is cancelled when the customer places an order after abandoned_at, even under another customer id with the same phone", async () => {
    const phone = newPhone();
    const body = checkout(phone, { abandoned_at: "2026-11-22T09:00:00Z" });
    await push("checkouts", body, delayed);
    const earlier = order(phone, { placed_at: "2026-11-22T08:00:00Z", customer: { external_id: uid("acct"), phone } });
    await push("orders", earlier, delayed);
    expect((await jobsFor("checkout_recovery", body.external_id))[0]?.status).toBe("pending");
    await push("orders", order(phone, { placed_at: "2026-11-22T09:30:00Z", customer: { external_id: uid("acct"), phone } }), delayed);
    const [job] = await jobsFor("checkout_recovery", body.external_id);
    expect(job).toMatchObject({ status: "cancelled", last_error: "the customer placed an order after abandoning the checkout" });
  });

  it("is not sent when someone with the customer's phone ordered after abandoned_at, even if its job escaped the cancellation", async () => {
    const phone = newPhone();
    const body = checkout(phone, { abandoned_at: "2026-11-22T09:00:00Z" });
    await push("checkouts", body, delayed);
    // Orders of other customers in the store, before and after, that must not count.
    await push("orders", order(newPhone(), { placed_at: "2026-11-22T10:00:00Z" }), delayed);
    await push("orders", order(phone, { placed_at: "2026-11-22T08:00:00Z", customer: { external_id: uid("early"), phone } }), delayed);
    const [job] = await jobsFor("checkout_recovery", body.external_id);
    // The job comes due first: with no order since, it sends.
    await server.db.updateTable("automation_jobs").set({ run_at: new Date(0) }).where("id", "=", job?.id ?? 0).execute();
    server.worker?.nudge();
    await settled(delayed.store.id);
    expect(await messagesFor("checkout_recovery", body.external_id)).toHaveLength(1);
    // Abandoned again, then an order by another customer id with the same phone, whose cancellation the job escapes.
    expect((await patch("checkouts", body.external_id, { status: "active" }, delayed)).status).toBe(200);
    await push("checkouts", body, delayed);
    await push("orders", order(phone, { placed_at: "2026-11-22T09:30:00Z", customer: { external_id: uid("acct"), phone } }), delayed);
    const again = (await jobsFor("checkout_recovery", body.external_id)).find((candidate) => candidate.id !== job?.id);
    expect(again).toMatchObject({ status: "cancelled", last_error: "the customer placed an order after abandoning the checkout" });
    await server.db.updateTable("automation_jobs").set({ status: "pending", last_error: null, run_at: new Date(0) }).where("id", "=", again?.id ?? 0).execute();
    server.worker?.nudge();
    await settled(delayed.store.id);
    expect(await messagesFor("checkout_recovery", body.external_id)).toHaveLength(1);
    expect((await jobsFor("checkout_recovery", body.external_id)).find((candidate) => candidate.id === again?.id)).toMatchObject({
      status: "cancelled",
      last_error: "the customer placed an order after abandoning the checkout",
    });
  });

  // Two connections: a worker's transaction holding the job while a push arrives.
  it.runIf(testDb === "postgres")("never makes a push wait for a worker that holds the recovery: the job is left to its run, which finds the checkout recovered", async () => {
    const body = checkout(newPhone());
    await push("checkouts", body, delayed);
    const [job] = await jobsFor("checkout_recovery", body.external_id);
    if (!job) throw new Error("no recovery job");
    const worker = await server.db.startTransaction().execute();
    try {
      // As a worker's group transaction holds the jobs it runs.
      await worker.selectFrom("automation_jobs").select("id").where("id", "=", job.id).forUpdate().execute();
      // Answered while the worker's transaction still holds the job: a push that waited for it would never be.
      expect((await patch("checkouts", body.external_id, { status: "recovered" }, delayed)).status).toBe(200);
    } finally {
      await worker.rollback().execute();
    }
    // Not cancelled by the push: its run decides, and sends nothing.
    expect((await jobsFor("checkout_recovery", body.external_id))[0]?.status).toBe("pending");
    await server.db.updateTable("automation_jobs").set({ run_at: new Date(0) }).where("id", "=", job.id).execute();
    server.worker?.nudge();
    await settled(delayed.store.id);
    expect(await messagesFor("checkout_recovery", body.external_id)).toHaveLength(0);
    expect((await jobsFor("checkout_recovery", body.external_id))[0]).toMatchObject({ status: "cancelled", last_error: "the checkout became recovered" });
  });

  it("is cancelled when the customer is erased, and nothing is sent even if the job comes due", async () => {
    const phone = newPhone();
    const customerId = uid("erase-me");
    const body = checkout(phone, { customer: { external_id: customerId, phone } });
    await push("checkouts", body, delayed);
    expect((await server.request("DELETE", `/api/v1/stores/${delayed.store.id}/customers/${customerId}`, { key: delayed.key })).status).toBe(204);
    const [job] = await jobsFor("checkout_recovery", body.external_id);
    expect(job).toMatchObject({ status: "cancelled", last_error: "the customer was erased" });
    // Even a job that escaped cancellation finds the customer erased when it runs.
    await server.db.updateTable("automation_jobs").set({ status: "pending", run_at: new Date(0) }).where("id", "=", job?.id ?? 0).execute();
    server.worker?.nudge();
    await settled(delayed.store.id);
    expect(await messagesFor("checkout_recovery", body.external_id)).toHaveLength(0);
    expect((await jobsFor("checkout_recovery", body.external_id))[0]).toMatchObject({ status: "cancelled", last_error: "the customer was erased" });
  });
});

describe("cancelling a checkout's recoveries", () => {
  it("looks them up by the checkouts, a checkout's push's, an order's or a batch's, in a plan made once for every run (a prepared statement's), with thousands pending or a few", async () => {
    await withOneStore(async (db, storeId) => {
      // One customer, 3,000 abandoned checkouts, each with its recovery pending.
      await sql`
        with buyer as (insert into customers (store_id, external_id) values (${storeId}, 'buyer') returning id),
        chk as (
          insert into checkouts (store_id, external_id, customer_id, status, abandoned_at, total_price)
          select ${storeId}::bigint, 'k-' || g, buyer.id, 'abandoned', now(), 1 from buyer, generate_series(1, 3000) as g
          returning id, external_id, customer_id)
        insert into automation_jobs (store_id, flow, dedupe_key, record_type, record_id, record_external_id, customer_id, payload, run_at)
        select ${storeId}::bigint, 'checkout_recovery', 'checkout_recovery:' || id || ':1', 'checkout', id, external_id, customer_id, '{"abandonment":1}', now() + interval '1 hour'
        from chk`.execute(db);
      const ordersWritten = (orders: number) =>
        db
          .with("ord", (qc) => qc.selectFrom("customers").select(["id as customer_id", sql<Date>`now()`.as("placed_at")]).where("store_id", "=", storeId).where("external_id", "=", "buyer"))
          .with("cancelled", (qc) => cancelRecoveriesForWrittenOrders(qc, orders))
          .selectFrom("ord")
          .selectAll()
          .compile();
      const statements = {
        // A checkout's push or PATCH: the checkout it wrote (CTE chk), whose recovery it cancels when it left abandoned.
        checkout: db
          .with("chk", (qc) => qc.selectFrom("checkouts").selectAll().where("store_id", "=", storeId).where("external_id", "=", "k-1500"))
          .with("cancelled", (qc) => cancelRecoveriesOfLeftCheckouts(qc))
          .selectFrom("chk")
          .select("id")
          .compile(),
        // An order's push: its customer (CTE customer) and the order (CTE ord), which cancels what its contact abandoned before.
        order: db
          .with("customer", (qc) => qc.selectFrom("customers").select(["id", "contact_id"]).where("store_id", "=", storeId).where("external_id", "=", "buyer"))
          .with("ord", (qc) => qc.selectNoFrom(sql<Date>`now()`.as("placed_at")))
          .with("cancelled", (qc) => cancelRecoveriesForOrderRows(qc))
          .selectFrom("ord")
          .selectAll()
          .compile(),
        // Orders written together (up to `MOST_ORDERS_BY_ID`) and a batch of more, whose customers an earlier statement wrote.
        together: ordersWritten(2),
        batch: ordersWritten(MOST_ORDERS_BY_ID + 1),
      };
      await sql`set plan_cache_mode = force_generic_plan`.execute(db);
      const plans = async (moment: string) => {
        for (const [name, { sql: text, parameters }] of Object.entries(statements)) {
          await db.executeQuery(CompiledQuery.raw(`prepare cancelling_${name} as ${text}`));
          const explained = await db.executeQuery<{ "QUERY PLAN": unknown }>(CompiledQuery.raw(`explain (format json) execute cancelling_${name}(${parameters.map(sqlLiteral).join(", ")})`));
          await db.executeQuery(CompiledQuery.raw(`deallocate cancelling_${name}`));
          const plan = JSON.stringify(explained.rows[0]?.["QUERY PLAN"]);
          // The recoveries of the checkouts, by their ids: never every recovery read and filtered, nor every job due.
          expect({ moment, name, plan }).toMatchObject({ moment, name, plan: expect.stringMatching(/"Index Name":"automation_jobs_recovery_idx"[^}]*"Index Cond":"\(record_id = ANY/) });
          expect({ moment, name, plan }).toMatchObject({ moment, name, plan: expect.not.stringContaining("automation_jobs_due_idx") });
        }
      };
      await plans("thousands pending, no statistics");
      // Statistics of a worker that keeps up: every job but a few ended, 20,000 more ended jobs.
      await sql`update automation_jobs set status = 'succeeded', finished_at = now() where store_id = ${storeId} and record_id % 1000 <> 0`.execute(db);
      await sql`
        insert into automation_jobs (store_id, flow, dedupe_key, record_type, record_id, record_external_id, status, finished_at)
        select ${storeId}::bigint, 'post_purchase', 'done:' || g, 'order', g, 'order-' || g, 'succeeded', now() from generate_series(1, 20000) as g`.execute(db);
      await sql`analyze`.execute(db);
      await plans("a few pending, analyzed");
      // A worker that has caught up: none pending (the index of due jobs looks empty to the planner).
      await sql`update automation_jobs set status = 'succeeded', finished_at = now() where store_id = ${storeId} and status = 'pending'`.execute(db);
      await sql`analyze`.execute(db);
      await plans("none pending, analyzed");
    });
  });
});
