import http from "node:http";
import type { AddressInfo } from "node:net";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pino } from "pino";
import * as tenants from "../tenancy/tenant.service.js";
import { claimJobs, lockDueJobs } from "./jobs.repository.js";
import { operatorWebhook, recordingProvider, type MessagingProvider } from "./providers.js";
import { runDueJobs, runJob } from "./worker.js";
import { checkout, jobsFor, messagesFor, newPhone, newStore, order, push, server, settled, withAutomationServer } from "../../test/automations.js";
import { FAST_WORKER, startTestServer, testDb, type TestServer, uid } from "../../test/helpers.js";

withAutomationServer();

describe("paused stores", () => {
  it("hold their automations until resumed", async () => {
    const [t, other] = [await newStore({ recovery_delay_seconds: 3600 }), await server.createTenant()];
    const body = checkout(newPhone());
    expect((await push("checkouts", body, t)).status).toBe(201);
    await tenants.updateStore(server.db, t.store.id, { paused: true });
    // The recovery comes due while the store is paused, before anything else the worker has.
    await server.db.updateTable("automation_jobs").set({ run_at: new Date(Date.now() - 3600_000) }).where("store_id", "=", t.store.id).execute();
    // A later job of another store is run: the worker has been past the paused store's, and left it waiting.
    const later = order(newPhone());
    expect((await push("orders", later, other)).status).toBe(201);
    server.worker?.nudge();
    await settled(other.store.id);
    expect(await messagesFor("post_purchase", later.external_id)).toHaveLength(1);
    expect((await jobsFor("checkout_recovery", body.external_id))[0]?.status).toBe("pending");
    await tenants.updateStore(server.db, t.store.id, { paused: false });
    server.worker?.nudge();
    await settled(t.store.id);
    expect(await messagesFor("checkout_recovery", body.external_id)).toHaveLength(1);
  });
});

describe("a worker that lost its lease", () => {
  let own: TestServer;
  beforeAll(async () => {
    own = await startTestServer();
  });
  afterAll(() => own?.close());

  /** A job claimed by `worker-a`, then taken over by `worker-b` (as after a lease ran out), and the log lines of worker-a running it anyway. */
  async function runTakenOverJob(provider: MessagingProvider, takeover: { locked_by: string; attempts?: number } = { locked_by: "worker-b" }) {
    const t = await own.createTenant();
    const body = order(newPhone());
    expect((await own.request("POST", `/api/v1/stores/${t.store.id}/orders`, { key: t.key, body })).status).toBe(201);
    const claimed = await claimJobs(own.db, "worker-a", 30, 10);
    const job = claimed.find((candidate) => candidate.flow === "post_purchase" && candidate.record_external_id === body.external_id);
    if (!job) throw new Error("the post-purchase job was not claimed");
    await own.db.updateTable("automation_jobs").set(takeover).where("id", "=", job.id).execute();
    const lines: string[] = [];
    const logger = pino({ level: "info" }, { write: (line: string) => lines.push(line) });
    await runJob({ db: own.db, logger, provider, workerId: "worker-a" }, FAST_WORKER, job);
    const after = await own.db.selectFrom("automation_jobs").selectAll().where("id", "=", job.id).executeTakeFirstOrThrow();
    const messages = await own.db.selectFrom("messages").select("id").where("job_id", "=", job.id).execute();
    return { messages: lines.map((line) => JSON.parse(line) as { msg: string }).map((line) => line.msg), after, recorded: messages.length };
  }

  it("with local delivery, records nothing and never logs success: the job is the other worker's", async () => {
    const { messages, after, recorded } = await runTakenOverJob(recordingProvider());
    expect(messages).not.toContain("automation succeeded");
    expect(messages).toContain("automation left to the worker that took it over");
    expect(after).toMatchObject({ status: "running", locked_by: "worker-b" });
    expect(recorded).toBe(0);
  });

  it("a claim that outlived its lease and was taken again by the same worker leaves the job to the newer claim", async () => {
    const { messages, after, recorded } = await runTakenOverJob(recordingProvider(), { locked_by: "worker-a", attempts: 2 });
    expect(messages).not.toContain("automation succeeded");
    expect(messages).toContain("automation left to the worker that took it over");
    expect(after).toMatchObject({ status: "running", locked_by: "worker-a", attempts: 2 });
    expect(recorded).toBe(0);
  });

  it("with webhook delivery, never logs success and leaves the job to the other worker", async () => {
    const delivered: string[] = [];
    const provider: MessagingProvider = { name: "webhook", external: true, deliver: (message) => Promise.resolve(void delivered.push(message.id)) };
    const { messages, after } = await runTakenOverJob(provider);
    expect(messages).not.toContain("automation succeeded");
    expect(messages).toContain("automation left to the worker that took it over");
    expect(after).toMatchObject({ status: "running", locked_by: "worker-b" });
  });
});

describe("jobs run together", () => {
  let own: TestServer;
  beforeAll(async () => {
    own = await startTestServer();
  });
  afterAll(() => own?.close());

  /** A store with `count` new orders and one shipment per order, and `run`: worker-a running every due job. */
  async function dueJobs(count: number) {
    const t = await own.createTenant();
    const orders = Array.from({ length: count }, () => order(newPhone()));
    expect((await own.request("POST", `/api/v1/stores/${t.store.id}/orders/batch`, { key: t.key, body: { items: orders } })).status).toBe(200);
    const shipments = orders.map((o) => ({ external_id: uid("shipment"), order_external_id: o.external_id, status: "in_transit" }));
    expect((await own.request("POST", `/api/v1/stores/${t.store.id}/shipments/batch`, { key: t.key, body: { items: shipments } })).status).toBe(200);
    const jobs = await own.db.selectFrom("automation_jobs").selectAll().where("store_id", "=", t.store.id).where("status", "=", "pending").execute();
    expect(jobs.filter((job) => job.flow === "post_purchase")).toHaveLength(count);
    expect(jobs.filter((job) => job.flow === "shipping_notification")).toHaveLength(count);
    const lines: Array<{ msg: string; jobId?: number; storeId?: number; messageId?: string }> = [];
    const logger = pino({ level: "info" }, { write: (line: string) => lines.push(JSON.parse(line) as { msg: string }) });
    const run = () => runDueJobs({ db: own.db, logger, provider: recordingProvider(), workerId: "worker-a" }, FAST_WORKER, 1000);
    const outcome = async () => {
      const rows = await own.db.selectFrom("automation_jobs").select(["id", "status", "last_error", "locked_by", "attempts"]).where("store_id", "=", t.store.id).execute();
      const messages = await own.db.selectFrom("messages").select(["job_id", "to_phone", "content"]).where("store_id", "=", t.store.id).execute();
      return { rows: new Map(rows.map((row) => [row.id, row])), messages };
    };
    return { t, orders, jobs, lines, run, outcome };
  }

  it("each comes to what it would alone: one message per job, to its customer, with its record", async () => {
    const { t, orders, jobs, lines, run, outcome } = await dueJobs(12);
    // One of them is running on another worker's lease: it is that worker's, and not due.
    const takenOver = jobs.find((job) => job.flow === "post_purchase");
    if (!takenOver) throw new Error("no post-purchase job");
    await own.db
      .updateTable("automation_jobs")
      .set({ status: "running", attempts: 1, locked_by: "worker-b", locked_until: sql<Date>`now() + interval '30 seconds'` })
      .where("id", "=", takenOver.id)
      .execute();
    await run();
    const { rows, messages } = await outcome();
    expect(messages).toHaveLength(jobs.length - 1);
    expect(messages.map((message) => message.job_id)).not.toContain(takenOver.id);
    expect(rows.get(takenOver.id)).toMatchObject({ status: "running", locked_by: "worker-b" });
    // Each of the others ended by worker-a on its first attempt.
    for (const job of jobs.filter((candidate) => candidate.id !== takenOver.id)) expect(rows.get(job.id)).toMatchObject({ status: "succeeded", locked_by: "worker-a", attempts: 1 });
    const thanks = messages.filter((message) => (message.content as { template: string }).template === "post_purchase");
    expect(thanks).toHaveLength(11);
    for (const message of thanks) {
      const sent = orders.find((o) => o.external_id === (message.content as { order: { external_id: string } }).order.external_id);
      expect(message.to_phone).toBe(sent?.customer.phone);
      expect(message.content).toMatchObject({ first_name: "Ada", order: { total_price: "42.50", currency: "EUR" } });
    }
    // One line per run, naming its message and store (the database row is the message: nothing else logs it).
    const succeeded = lines.filter((line) => line.msg === "automation succeeded");
    expect(succeeded).toHaveLength(jobs.length - 1);
    for (const line of succeeded) expect(line).toMatchObject({ storeId: t.store.id, messageId: expect.any(String) });
    expect(lines.map((line) => line.msg)).not.toContain("automations run one by one");
    // Nothing is due any more: a second run finds nothing.
    expect(await run()).toBe(0);
  });

  it("a job whose message an earlier attempt recorded delivers that message, with its id and content, once", async () => {
    const { jobs, outcome } = await dueJobs(2);
    const [earlier, fresh] = jobs.filter((job) => job.flow === "post_purchase");
    if (!earlier || !fresh) throw new Error("no post-purchase jobs");
    // An earlier attempt (a webhook delivery that did not go through) recorded its message and stopped.
    const content = { template: "post_purchase", first_name: "Earlier", order: { external_id: earlier.record_external_id, total_price: "1.00", currency: "USD", placed_at: "2026-11-01T00:00:00.000Z" } };
    const first = await own.db
      .insertInto("messages")
      .values({ store_id: earlier.store_id, job_id: earlier.id, flow: "post_purchase", customer_id: earlier.customer_id, to_phone: "+12025550100", content: JSON.stringify(content), provider: "webhook", status: "pending" })
      .returning(["id"])
      .executeTakeFirstOrThrow();
    const delivered: Array<{ id: string; to: string | null; content: unknown }> = [];
    const capturing: MessagingProvider = { name: "record", external: false, deliver: (message) => (delivered.push(message), Promise.resolve()) };
    await runDueJobs({ db: own.db, logger: pino({ level: "silent" }), provider: capturing, workerId: "worker-a" }, FAST_WORKER, 1000);
    expect(delivered.filter((message) => message.id === first.id)).toEqual([{ id: first.id, store_id: earlier.store_id, flow: "post_purchase", to: "+12025550100", content, created_at: expect.any(String) }]);
    // The other job's message is the one its run made, as recorded.
    const { messages } = await outcome();
    const made = messages.find((message) => message.job_id === fresh.id);
    expect(made?.content).toMatchObject({ template: "post_purchase", order: { external_id: fresh.record_external_id } });
    expect(delivered.find((message) => message.content !== null && (message.content as { order?: { external_id: string } }).order?.external_id === fresh.record_external_id)?.content).toEqual(made?.content);
    expect(messages.filter((message) => message.job_id === earlier.id)).toHaveLength(1);
  });

  it("a worker that stops mid-way leaves its jobs due as they were, and two workers never run the same job", async () => {
    const { jobs, run, outcome } = await dueJobs(4);
    const trx = await own.db.startTransaction().execute();
    try {
      // A worker holds the jobs (as its group's transaction does) and then stops: its transaction never commits.
      const held = await lockDueJobs(trx, 1000);
      expect(held.map((job) => job.id)).toEqual(expect.arrayContaining(jobs.map((job) => job.id)));
      // Meanwhile another worker finds none of them due (the embedded database has one connection: no other worker can run meanwhile).
      if (testDb === "postgres") expect(await run()).toBe(0);
    } finally {
      await trx.rollback().execute();
    }
    const before = await outcome();
    for (const job of jobs) expect(before.rows.get(job.id)).toMatchObject({ status: "pending", attempts: 0, locked_by: null });
    expect(before.messages).toHaveLength(0);
    // Then they run, each once.
    const [first, second] = await Promise.all([run(), run()]);
    expect(first + second).toBe(jobs.length);
    const after = await outcome();
    expect(after.messages).toHaveLength(jobs.length);
    for (const job of jobs) expect(after.rows.get(job.id)).toMatchObject({ status: "succeeded", attempts: 1 });
  });

  it("contact syncs run together: each contact ends with the profile of its last sync", async () => {
    const t = await own.createTenant();
    const [shared, own2] = [newPhone(), newPhone()];
    const customers = [
      { external_id: uid("c"), phone: shared, first_name: "First", tags: ["a"] },
      { external_id: uid("c"), phone: own2, first_name: "Solo", lifetime_value: 500 },
      { external_id: uid("c"), phone: shared, first_name: "Later", orders_count: 3 },
    ];
    expect((await own.request("POST", `/api/v1/stores/${t.store.id}/customers/batch`, { key: t.key, body: { items: customers } })).status).toBe(200);
    // Due in the order they were pushed, as the worker takes them.
    const jobs = await own.db.selectFrom("automation_jobs").selectAll().where("store_id", "=", t.store.id).orderBy("run_at").orderBy("id").execute();
    expect(jobs.map((job) => [job.flow, job.record_external_id])).toEqual(customers.map((customer) => ["contact_sync", customer.external_id]));
    const lines: string[] = [];
    const logger = pino({ level: "info" }, { write: (line: string) => lines.push(line) });
    expect(await runDueJobs({ db: own.db, logger, provider: recordingProvider(), workerId: "worker-a" }, FAST_WORKER, 1000)).toBe(3);
    expect(lines.filter((line) => line.includes("automations run one by one"))).toEqual([]);
    const contacts = await own.db.selectFrom("contacts").select(["phone", "first_name", "tags", "lifetime_value", "orders_count", "synced_customer_id"]).where("store_id", "=", t.store.id).orderBy("phone").execute();
    const ids = await own.db.selectFrom("customers").select(["id", "external_id"]).where("store_id", "=", t.store.id).execute();
    const idOf = (externalId: string) => ids.find((row) => row.external_id === externalId)?.id;
    expect(new Map(contacts.map((c) => [c.phone, c]))).toEqual(
      new Map([
        [shared, { phone: shared, first_name: "Later", tags: [], lifetime_value: 0, orders_count: 3, synced_customer_id: idOf(customers[2]?.external_id ?? "") }],
        [own2, { phone: own2, first_name: "Solo", tags: [], lifetime_value: 500, orders_count: 0, synced_customer_id: idOf(customers[1]?.external_id ?? "") }],
      ]),
    );
    const messages = await own.db.selectFrom("messages").select(["to_phone", "content"]).where("store_id", "=", t.store.id).execute();
    expect(messages).toHaveLength(3);
    expect(messages.map((m) => (m.content as { profile: { first_name: string } }).profile.first_name).sort()).toEqual(["First", "Later", "Solo"]);
  });

  it("a job that fails leaves nothing of the group: each then runs alone, and only the failing one is retried", async () => {
    const { jobs, lines, run, outcome } = await dueJobs(5);
    const broken = jobs.find((job) => job.flow === "shipping_notification");
    if (!broken) throw new Error("no shipping job");
    // A payload that no longer matches its flow fails the job loudly.
    await own.db.updateTable("automation_jobs").set({ payload: JSON.stringify({ status: 42 }) }).where("id", "=", broken.id).execute();
    await run();
    const { rows, messages } = await outcome();
    expect(lines.map((line) => line.msg)).toContain("automations run one by one");
    expect(rows.get(broken.id)).toMatchObject({ status: "pending" });
    expect(rows.get(broken.id)?.last_error).toBeTruthy();
    expect(messages.map((message) => message.job_id).sort()).toEqual(jobs.filter((job) => job.id !== broken.id).map((job) => job.id).sort());
    for (const job of jobs.filter((candidate) => candidate.id !== broken.id)) expect(rows.get(job.id)?.status).toBe("succeeded");
    // Retried, it would fail the next test's group.
    await own.db.updateTable("automation_jobs").set({ status: "cancelled" }).where("id", "=", broken.id).execute();
  });

  /** A store recovering at once, with these checkouts pushed, and `run`: worker-a running every due job, its log lines kept. */
  async function dueRecoveries(checkouts: Array<ReturnType<typeof checkout>>) {
    const t = await own.createTenant();
    await tenants.updateStore(own.db, t.store.id, { recovery_delay_seconds: 0 });
    expect((await own.request("POST", `/api/v1/stores/${t.store.id}/checkouts/batch`, { key: t.key, body: { items: checkouts } })).status).toBe(200);
    const lines: Array<{ msg: string }> = [];
    const logger = pino({ level: "info" }, { write: (line: string) => lines.push(JSON.parse(line) as { msg: string }) });
    const run = () => runDueJobs({ db: own.db, logger, provider: recordingProvider(), workerId: "worker-a" }, FAST_WORKER, 1000);
    const jobOf = async (externalId: string) => (await jobsFor("checkout_recovery", externalId, own.db))[0];
    const messageOf = (externalId: string) =>
      own.db
        .selectFrom("messages as m")
        .innerJoin("automation_jobs as j", "j.id", "m.job_id")
        .select(["m.to_phone", "m.content"])
        .where("j.flow", "=", "checkout_recovery")
        .where("j.record_external_id", "=", externalId)
        .execute();
    return { t, lines, run, jobOf, messageOf };
  }

  it("recoveries due together each come to what their checkout says: one message per checkout still abandoned, none for the others", async () => {
    const [waiting, ordered, recovered] = [newPhone(), newPhone(), newPhone()].map((phone, i) => checkout(phone, { total_price: 10 + i, currency: "eur" }));
    if (!waiting || !ordered || !recovered) throw new Error("no checkouts");
    const { t, lines, run, jobOf, messageOf } = await dueRecoveries([waiting, ordered, recovered]);
    // Someone with the second checkout's phone ordered since, and the third was recovered, after their jobs escaped cancellation.
    const later = order(ordered.customer.phone, { placed_at: "2026-11-22T09:30:00Z", customer: { external_id: uid("acct"), phone: ordered.customer.phone } });
    expect((await own.request("POST", `/api/v1/stores/${t.store.id}/orders`, { key: t.key, body: later })).status).toBe(201);
    expect((await own.request("PATCH", `/api/v1/stores/${t.store.id}/checkouts/${recovered.external_id}`, { key: t.key, body: { status: "recovered" } })).status).toBe(200);
    await own.db.updateTable("automation_jobs").set({ status: "pending", last_error: null }).where("store_id", "=", t.store.id).where("flow", "=", "checkout_recovery").execute();
    expect(await run()).toBeGreaterThanOrEqual(3);
    expect(lines.map((line) => line.msg)).not.toContain("automations run one by one");
    expect(await messageOf(waiting.external_id)).toEqual([
      {
        to_phone: waiting.customer.phone,
        content: { template: "checkout_recovery", first_name: "Ada", checkout: { external_id: waiting.external_id, total_price: "10.00", currency: "EUR", recovery_url: waiting.recovery_url } },
      },
    ]);
    expect(await jobOf(waiting.external_id)).toMatchObject({ status: "succeeded", locked_by: "worker-a", attempts: 1 });
    expect(await messageOf(ordered.external_id)).toEqual([]);
    expect(await jobOf(ordered.external_id)).toMatchObject({ status: "cancelled", last_error: "the customer placed an order after abandoning the checkout" });
    expect(await messageOf(recovered.external_id)).toEqual([]);
    expect(await jobOf(recovered.external_id)).toMatchObject({ status: "cancelled", last_error: "the checkout became recovered" });
  });

  // Two connections: a push's transaction holding a checkout while the worker's group runs.
  it.runIf(testDb === "postgres")("a recovery whose checkout a push holds is left to run alone, which waits for the push and decides on what it wrote", async () => {
    const [held, free] = [checkout(newPhone()), checkout(newPhone())];
    const { lines, run, jobOf, messageOf } = await dueRecoveries([held, free]);
    const push = await own.db.startTransaction().execute();
    let ran: Promise<number> | undefined;
    try {
      // As a push recovering the checkout holds its row until it commits.
      await push.updateTable("checkouts").set({ status: "recovered" }).where("external_id", "=", held.external_id).execute();
      ran = run();
      // The group runs the other recovery and leaves this one, claimed, to its run alone, which waits for the push.
      await expect.poll(async () => (await jobOf(free.external_id))?.status, { interval: 25 }).toBe("succeeded");
      await expect.poll(async () => (await jobOf(held.external_id))?.status, { interval: 25 }).toBe("running");
      await push.commit().execute();
    } catch (error) {
      await push.rollback().execute();
      throw error;
    }
    await ran;
    expect(await messageOf(free.external_id)).toHaveLength(1);
    expect(await messageOf(held.external_id)).toEqual([]);
    expect(await jobOf(held.external_id)).toMatchObject({ status: "cancelled", last_error: "the checkout became recovered", locked_by: "worker-a", attempts: 1 });
    expect(lines.map((line) => line.msg)).not.toContain("automations run one by one");
  });
});

describe("the worker's pool", () => {
  it("claims a push's jobs as soon as a slot frees up, not at the next poll", async () => {
    // One slot, a first delivery held until the second push is answered, and a poll an hour away:
    // the second push's nudge finds the slot busy, so only a claim when the slot frees up delivers it.
    // (Delivered outside the job's transaction, as a webhook is, so the held delivery blocks no push.)
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const delivered: string[] = [];
    const provider: MessagingProvider = {
      name: "held",
      external: true,
      deliver: async (message) => {
        if (delivered.push(message.flow) === 1) await held;
      },
    };
    const own = await startTestServer({ worker: { concurrency: 1, pollIntervalMs: 3_600_000, provider } });
    try {
      const t = await own.createTenant();
      const push = (body: unknown) => own.request("POST", `/api/v1/stores/${t.store.id}/orders`, { key: t.key, body });
      expect((await push(order(newPhone()))).status).toBe(201);
      // The first order's jobs (its post-purchase message, its customer's contact sync), one at a time.
      await expect.poll(() => delivered.length).toBe(1);
      expect((await push(order(newPhone()))).status).toBe(201);
      release();
      await expect.poll(() => delivered.filter((flow) => flow === "post_purchase").length).toBe(2);
    } finally {
      release();
      await own.close();
    }
  });

  it("keeps its other slots running while one delivery hangs", async () => {
    let release: () => void = () => undefined;
    const hanging = new Promise<void>((resolve) => (release = resolve));
    const received: string[] = [];
    const hook = http.createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        received.push(String(req.headers["x-message-id"]));
        // The first message hangs until the test lets it go; every other one is answered at once.
        if (received.length === 1) void hanging.then(() => res.end());
        else res.end();
      });
    });
    await new Promise<void>((resolve) => hook.listen(0, "127.0.0.1", () => resolve()));
    const url = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/hooks`;
    const pooled = await startTestServer({ worker: { concurrency: 2, provider: operatorWebhook({ url, secret: "pool-secret-0123456789", timeoutMs: 20_000 }) } });
    try {
      const t = await pooled.createTenant();
      const push = (i: number) =>
        pooled.request("POST", `/api/v1/stores/${t.store.id}/customers`, { key: t.key, body: { external_id: `pool-${i}`, phone: newPhone() } });
      expect((await push(0)).status).toBe(201);
      await expect.poll(() => received.length).toBe(1);
      for (let i = 1; i <= 6; i++) expect((await push(i)).status).toBe(201);
      // Six more messages delivered through the one free slot while the first still hangs.
      await expect.poll(() => received.length).toBe(7);
      release();
      await expect
        .poll(async () => (await pooled.db.selectFrom("automation_jobs").select("id").where("store_id", "=", t.store.id).where("status", "=", "succeeded").execute()).length)
        .toBe(7);
    } finally {
      release();
      await pooled.close();
      hook.closeAllConnections();
      await new Promise<void>((resolve) => hook.close(() => resolve()));
    }
  });
});
