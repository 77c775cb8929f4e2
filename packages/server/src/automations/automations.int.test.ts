import { createHmac } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Flow } from "@commerce-ingest/shared";
import { CompiledQuery, sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as tenants from "../tenancy/tenant.service.js";
import { pino } from "pino";
import { cancelRecoveriesForOrderRows, cancelRecoveriesForWrittenOrders, cancelRecoveriesOfLeftCheckouts, MOST_ORDERS_BY_ID, postPurchase } from "./flows/index.js";
import { findCustomersForSync, lockRecipientContacts } from "./flows/flow.repository.js";
import { decideMany } from "./flows/index.js";
import { claimJobs, dueJobsToLock, lockDueJobs } from "./jobs.repository.js";
import { recordingProvider, webhookProvider, type MessagingProvider } from "./providers.js";
import { runDueJobs, runJob } from "./worker.js";
import { retries } from "../db/index.js";
import { LockOrderConflict } from "../db/transaction.js";
import type { Db } from "../db/types.js";
import { failedInLastHour } from "../api/metrics.js";
import { ADMIN_TOKEN, checkoutBody, createTestDatabase, FAST_WORKER, orderBody, refuseInserts, startTestServer, testDb, type TestServer } from "../../test/helpers.js";

let server: TestServer;
let tenant: Awaited<ReturnType<TestServer["createTenant"]>>;
let delayed: Awaited<ReturnType<TestServer["createTenant"]>>;

beforeAll(async () => {
  server = await startTestServer({ worker: {} });
  tenant = await server.createTenant();
  await tenants.updateStore(server.db, tenant.store.id, { recovery_delay_seconds: 0 });
  delayed = await server.createTenant();
});
afterAll(() => server?.close());

let seq = 0;
const uid = (prefix: string) => `${prefix}-${Date.now()}-${++seq}`;
let phoneSeq = 100;
const newPhone = () => `+1415555${String(1000 + ++phoneSeq).slice(-4)}`;

const push = (resource: string, body: unknown, t = tenant, headers: Record<string, string> = {}) =>
  server.request("POST", `/api/v1/stores/${t.store.id}/${resource}`, { key: t.key, body, headers });
const patch = (resource: string, id: string, body: unknown, t = tenant) =>
  server.request("PATCH", `/api/v1/stores/${t.store.id}/${resource}/${encodeURIComponent(id)}`, { key: t.key, body });

const order = (phone: string, fields: Record<string, unknown> = {}) => orderBody({ total_price: 42.5, currency: "eur", customer: { phone, first_name: "Ada" }, ...fields });
const checkout = (phone: string, fields: Record<string, unknown> = {}) =>
  checkoutBody({ recovery_url: "https://shop.example/recover/xyz", customer: { phone, first_name: "Ada" }, ...fields });

function messagesFor(flow: Flow, recordExternalId: string) {
  return server.db
    .selectFrom("messages as m")
    .innerJoin("automation_jobs as j", "j.id", "m.job_id")
    .select(["m.id", "m.content", "m.to_phone", "m.status", "j.status as job_status"])
    .where("j.flow", "=", flow)
    .where("j.record_external_id", "=", recordExternalId)
    .execute();
}

function jobsFor(flow: Flow, recordExternalId: string, db = server.db) {
  return db.selectFrom("automation_jobs").selectAll().where("flow", "=", flow).where("record_external_id", "=", recordExternalId).orderBy("id").execute();
}

/** Waits until every due job of the store is finished one way or another (judged by the database's clock). */
async function settled(storeId = tenant.store.id) {
  const unfinished = () =>
    server.db
      .selectFrom("automation_jobs")
      .select("id")
      .where("store_id", "=", storeId)
      .where((eb) => eb.or([eb("status", "=", "running"), eb.and([eb("status", "=", "pending"), eb("run_at", "<=", sql<Date>`now()`)])]))
      .execute();
  await expect.poll(async () => (await unfinished()).length, { timeout: 10_000, interval: 25 }).toBe(0);
}

describe("post-purchase", () => {
  it("fires once when an order is created, with the order and customer in the message", async () => {
    const phone = newPhone();
    const body = order(phone);
    expect((await push("orders", body)).status).toBe(201);
    await settled();
    const messages = await messagesFor("post_purchase", body.external_id);
    expect(messages).toHaveLength(1);
    expect(messages[0]).toMatchObject({
      to_phone: phone,
      status: "sent",
      job_status: "succeeded",
      content: { template: "post_purchase", first_name: "Ada", order: { external_id: body.external_id, total_price: "42.50", currency: "EUR" } },
    });
  });

  it("does not fire on an update of the order", async () => {
    const body = order(newPhone());
    await push("orders", body);
    await settled();
    expect((await push("orders", { ...body, total_price: 50 })).status).toBe(200);
    expect((await patch("orders", body.external_id, { financial_status: "refunded" })).status).toBe(200);
    await settled();
    expect(await messagesFor("post_purchase", body.external_id)).toHaveLength(1);
    expect(await jobsFor("post_purchase", body.external_id)).toHaveLength(1);
  });

  it("24 concurrent identical order creates give one post-purchase message", async () => {
    const body = order(newPhone());
    const responses = await Promise.all(Array.from({ length: 24 }, () => push("orders", body)));
    expect(responses.filter((res) => res.status === 201)).toHaveLength(1);
    await settled();
    expect(await messagesFor("post_purchase", body.external_id)).toHaveLength(1);
  });
});

describe("shipping notification", () => {
  it("fires on creation and on each new status, never twice for one status", async () => {
    const o = order(newPhone());
    await push("orders", o);
    const shipment = { external_id: uid("ship"), order_external_id: o.external_id, carrier: "DHL", tracking_number: "JD01", status: "in_transit" };
    await push("shipments", shipment);
    await settled();
    let messages = await messagesFor("shipping_notification", shipment.external_id);
    expect(messages).toHaveLength(1);
    expect(messages[0]?.content).toMatchObject({ template: "shipping_notification", shipment: { status: "in_transit", carrier: "DHL", tracking_number: "JD01" }, order: { external_id: o.external_id } });

    await push("shipments", shipment);
    await push("shipments", { ...shipment, tracking_url: "https://track.example/JD01" });
    await settled();
    expect(await messagesFor("shipping_notification", shipment.external_id)).toHaveLength(1);

    await push("shipments", { ...shipment, status: "delivered" });
    await settled();
    messages = await messagesFor("shipping_notification", shipment.external_id);
    expect(messages).toHaveLength(2);
    expect(messages.map((m) => (m.content as { shipment: { status: string } }).shipment.status).sort()).toEqual(["delivered", "in_transit"]);
  });
});

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
      const answered = await Promise.race([
        patch("checkouts", body.external_id, { status: "recovered" }, delayed).then((res) => res.status),
        new Promise((resolve) => setTimeout(() => resolve("still waiting"), 3000)),
      ]);
      expect(answered).toBe(200);
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

describe("contact sync", () => {
  it("syncs a new customer's profile to its contact, once per change", async () => {
    const phone = newPhone();
    const id = uid("sync");
    // Tags with what array and JSON literals escape: they reach the contact as sent.
    const tags = ["vip", 'say "hi", {ok} \\ ü'];
    const body = { external_id: id, phone, first_name: "Grace", tags, lifetime_value: 900, orders_count: 3 };
    await push("customers", body);
    await settled();
    let messages = await messagesFor("contact_sync", id);
    expect(messages).toHaveLength(1);
    expect(messages[0]?.content).toMatchObject({ template: "contact_sync", profile: { phone, first_name: "Grace", tags, lifetime_value: 900, orders_count: 3 } });
    const contact = await server.db.selectFrom("contacts").selectAll().where("store_id", "=", tenant.store.id).where("phone", "=", phone).executeTakeFirstOrThrow();
    expect(contact).toMatchObject({ first_name: "Grace", tags, lifetime_value: 900, orders_count: 3 });
    expect(contact.synced_at).toBeInstanceOf(Date);

    await push("customers", body);
    await push("customers", { external_id: id, phone });
    await settled();
    expect(await messagesFor("contact_sync", id)).toHaveLength(1);

    await push("customers", { ...body, lifetime_value: 1500 });
    await settled();
    messages = await messagesFor("contact_sync", id);
    expect(messages).toHaveLength(2);
    const synced = await server.db.selectFrom("contacts").select("lifetime_value").where("id", "=", contact.id).executeTakeFirstOrThrow();
    expect(synced.lifetime_value).toBe(1500);
  });

  it("syncs the customer embedded in an order", async () => {
    const id = uid("embedded");
    await push("orders", order(newPhone(), { customer: { external_id: id, phone: newPhone(), lifetime_value: 10, orders_count: 1 } }));
    await settled();
    expect(await messagesFor("contact_sync", id)).toHaveLength(1);
  });
});

describe("erased customers", () => {
  it("get nothing: pending jobs cancelled, messages already sent redacted", async () => {
    const phone = newPhone();
    const id = uid("gone");
    await push("orders", order(phone, { customer: { external_id: id, phone } }));
    await settled();
    const customer = await server.db.selectFrom("customers").select("id").where("external_id", "=", id).executeTakeFirstOrThrow();
    await server.request("DELETE", `/api/v1/stores/${tenant.store.id}/customers/${id}`, { key: tenant.key });
    const sent = await server.db.selectFrom("messages").select(["to_phone", "content"]).where("to_phone", "=", phone).execute();
    expect(sent).toHaveLength(0);
    const redacted = await server.db.selectFrom("messages").select(["to_phone", "content"]).where("customer_id", "=", customer.id).execute();
    expect(redacted.length).toBeGreaterThanOrEqual(2);
    for (const message of redacted) expect(message).toEqual({ to_phone: null, content: { redacted: true } });
  });

  it("leave no phone behind: a phone-keyed customer's runs lose their id, a shared contact loses the synced profile", async () => {
    const phone = newPhone();
    await push("customers", { external_id: uid("other"), phone });
    await settled();
    // The phone-keyed customer syncs last: the shared contact shows its profile.
    await push("customers", { phone, first_name: "Shared", lifetime_value: 50 });
    await settled();
    const contact = await server.db.selectFrom("contacts").selectAll().where("store_id", "=", tenant.store.id).where("phone", "=", phone).executeTakeFirstOrThrow();
    expect(contact.synced_at).not.toBeNull();
    await server.request("DELETE", `/api/v1/stores/${tenant.store.id}/customers/${encodeURIComponent(phone)}`, { key: tenant.key });
    expect(await jobsFor("contact_sync", phone)).toHaveLength(0);
    const after = await server.db.selectFrom("contacts").selectAll().where("id", "=", contact.id).executeTakeFirstOrThrow();
    expect(after).toMatchObject({ first_name: null, lifetime_value: 0, tags: [], synced_at: null });
  });

  // Two connections: a worker's transaction holding the customer's job while the erasure arrives.
  it.runIf(testDb === "postgres")("wait for a worker that holds their contact, in the lock order, never deadlocking or retrying", async () => {
    const id = uid("held");
    await push("customers", { external_id: id, phone: newPhone(), first_name: "Held" });
    await settled();
    const customer = await server.db.selectFrom("customers").select("id").where("external_id", "=", id).executeTakeFirstOrThrow();
    const [job] = await jobsFor("contact_sync", id);
    if (!job) throw new Error("no contact sync job");
    const before = { ...retries };
    const worker = await server.db.startTransaction().execute();
    let erasure: Promise<number> | undefined;
    let erased = false;
    try {
      // As a worker's group runs: its jobs held, then its recipients' contacts, then their customers read.
      await worker.selectFrom("automation_jobs").select("id").where("id", "=", job.id).forNoKeyUpdate().execute();
      await lockRecipientContacts(worker, [{ record_type: "customer", record_id: customer.id }], "key share");
      erasure = server.request("DELETE", `/api/v1/stores/${tenant.store.id}/customers/${id}`, { key: tenant.key }).then((res) => {
        erased = true;
        return res.status;
      });
      await new Promise((resolve) => setTimeout(resolve, 300));
      const [read] = [...(await findCustomersForSync(worker, [customer.id])).values()];
      // The erasure waits for the contact the worker holds: the worker still reads the customer as it was.
      expect(erased).toBe(false);
      expect(read).toMatchObject({ deleted_at: null });
      await worker.commit().execute();
    } catch (error) {
      await worker.rollback().execute();
      throw error;
    }
    expect(await erasure).toBe(204);
    expect(retries).toEqual(before);
    expect(await server.db.selectFrom("customers").select("deleted_at").where("id", "=", customer.id).executeTakeFirstOrThrow()).toMatchObject({ deleted_at: expect.any(Date) });
  });

  // Four connections: a worker's run, a push's transaction and an erasure meeting on two contacts, as a busy store makes them meet.
  it.runIf(testDb === "postgres")("leave a contact sync whose contact a push holds to run alone: a run never waits for a lock after its first", async () => {
    // Contacts A and B, A first in phone order: A's customer is synced and B's gets a post-purchase in one run.
    const [phoneA, phoneB] = [newPhone(), newPhone()].sort() as [string, string];
    const syncedId = uid("synced");
    await push("customers", { external_id: syncedId, phone: phoneA, first_name: "Before" }, tenant, { "X-Backfill": "true" });
    const body = order(phoneB);
    await push("orders", body, tenant, { "X-Backfill": "true" });
    const synced = await server.db.selectFrom("customers").select(["id", "contact_id", "profile_version"]).where("external_id", "=", syncedId).executeTakeFirstOrThrow();
    const ordered = await server.db.selectFrom("orders").select(["id", "customer_id"]).where("store_id", "=", tenant.store.id).where("external_id", "=", body.external_id).executeTakeFirstOrThrow();
    const erasedId = (await server.db.selectFrom("customers").select("external_id").where("id", "=", ordered.customer_id).executeTakeFirstOrThrow()).external_id;
    const job = { id: 0, store_id: tenant.store.id, attempts: 0 };
    const jobs = [
      { ...job, flow: "contact_sync" as const, record_type: "customer" as const, record_id: synced.id, customer_id: synced.id, payload: { profile_version: synced.profile_version } },
      { ...job, flow: "post_purchase" as const, record_type: "order" as const, record_id: ordered.id, customer_id: ordered.customer_id, payload: {} },
    ];
    const before = { ...retries };
    const waiting = async () =>
      Number((await sql<{ n: string }>`select count(*) as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`.execute(server.db)).rows[0]?.n);

    const holder = await server.db.startTransaction().execute();
    const worker = await server.db.startTransaction().execute();
    const pusher = await server.db.startTransaction().execute();
    try {
      // The run is held up between its contacts (A and B, key share) and its customers' read.
      await holder.selectFrom("customers").select("id").where("id", "=", synced.id).forUpdate().execute();
      const run = decideMany(worker, jobs);
      await expect.poll(waiting).toBe(1);
      // A push's statement takes contact A, as every push takes its contacts (a key-share lock never stops it).
      await pusher.updateTable("contacts").set({ synced_at: sql`synced_at` }).where("id", "=", synced.contact_id).execute();
      // The erasure of B's customer waits for the run.
      const erasure = server.request("DELETE", `/api/v1/stores/${tenant.store.id}/customers/${encodeURIComponent(erasedId ?? "")}`, { key: tenant.key });
      await expect.poll(waiting).toBe(2);
      await holder.commit().execute();
      // The run would write A's profile, which the push holds: it leaves that sync to run alone and ends without waiting.
      expect((await run).map(({ job, decision }) => [job.flow, decision.send])).toEqual([["post_purchase", true]]);
      await worker.commit().execute();
      expect((await erasure).status).toBe(204);
      await pusher.commit().execute();
    } catch (error) {
      for (const trx of [holder, worker, pusher]) await trx.rollback().execute().catch(() => undefined);
      throw error;
    }
    expect(retries).toEqual(before);
    expect(await server.db.selectFrom("contacts").select("first_name").where("id", "=", synced.contact_id ?? 0).executeTakeFirstOrThrow()).toEqual({ first_name: null });
  });

  it("a job whose recipient's contact its run does not hold is not decided on that read: left to run alone, or run again", async () => {
    const phone = newPhone();
    const body = order(phone);
    await push("orders", body, tenant, { "X-Backfill": "true" });
    const stored = await server.db.selectFrom("orders").select(["id", "customer_id"]).where("store_id", "=", tenant.store.id).where("external_id", "=", body.external_id).executeTakeFirstOrThrow();
    const due = { id: 0, store_id: tenant.store.id, flow: "post_purchase" as const, record_type: "order" as const, record_id: stored.id, customer_id: stored.customer_id, payload: {}, attempts: 0 };
    await server.db.transaction().execute(async (trx) => {
      // As if the order's customer changed between the run's lock of contacts and its read: the contact it needs is not held.
      expect(await postPurchase.decideMany(trx, [due], new Set())).toEqual([undefined]);
      await expect(postPurchase.decide(trx, { ...due, status: "running" } as never, new Set())).rejects.toBeInstanceOf(LockOrderConflict);
      // Held, it is decided.
      const held = await lockRecipientContacts(trx, [due], "key share");
      expect(await postPurchase.decideMany(trx, [due], held)).toMatchObject([{ send: true, recipient: { phone } }]);
    });
  });

  it.runIf(testDb === "postgres")("while a worker holds one of their jobs: the job is left to it, which finds the customer erased and redacts it", async () => {
    // A phone-keyed customer: its key, in its jobs, is its phone.
    const phone = newPhone();
    await push("customers", { phone, first_name: "Held" }, tenant, { "X-Backfill": "true" });
    const customer = await server.db.selectFrom("customers").select(["id", "profile_version"]).where("external_id", "=", phone).executeTakeFirstOrThrow();
    // Its sync, due in a moment: held by a worker's transaction meanwhile.
    await server.db
      .insertInto("automation_jobs")
      .values({
        store_id: tenant.store.id,
        flow: "contact_sync",
        dedupe_key: uid("held-sync"),
        record_type: "customer",
        record_id: customer.id,
        record_external_id: phone,
        customer_id: customer.id,
        payload: JSON.stringify({ profile_version: customer.profile_version }),
        run_at: sql<Date>`now() + interval '1 second'`,
      })
      .execute();
    const [job] = await jobsFor("contact_sync", phone);
    if (!job) throw new Error("no contact sync job");
    const worker = await server.db.startTransaction().execute();
    try {
      await worker.selectFrom("automation_jobs").select("id").where("id", "=", job.id).forNoKeyUpdate().execute();
      // The erasure never waits for a job: it answers while the job is held.
      expect((await server.request("DELETE", `/api/v1/stores/${tenant.store.id}/customers/${encodeURIComponent(phone)}`, { key: tenant.key })).status).toBe(204);
      expect(await server.db.selectFrom("automation_jobs").select(["status", "record_external_id"]).where("id", "=", job.id).executeTakeFirstOrThrow()).toEqual({
        status: "pending",
        record_external_id: phone,
      });
    } finally {
      await worker.rollback().execute();
    }
    // The worker that runs it finds the erasure: nothing sent, and the job no longer names the phone.
    await expect
      .poll(() => server.db.selectFrom("automation_jobs").select(["status", "last_error", "record_external_id"]).where("id", "=", job.id).executeTakeFirstOrThrow(), { timeout: 10_000 })
      .toEqual({ status: "cancelled", last_error: "the customer was erased", record_external_id: "(erased)" });
    expect(await server.db.selectFrom("messages").select("id").where("job_id", "=", job.id).execute()).toEqual([]);
  });
});

describe("erasure and contacts shared over time", () => {
  it("keeps the profile another customer synced to a phone the erased customer once had", async () => {
    const p1 = newPhone();
    const a = uid("mover");
    await push("customers", { external_id: a, phone: p1, first_name: "Alma" });
    await settled();
    await push("customers", { external_id: a, phone: newPhone(), first_name: "Alma" });
    const b = uid("newcomer");
    await push("customers", { external_id: b, phone: p1, first_name: "Bruno", lifetime_value: 700 });
    await settled();
    expect((await server.request("DELETE", `/api/v1/stores/${tenant.store.id}/customers/${a}`, { key: tenant.key })).status).toBe(204);
    const contact = await server.db.selectFrom("contacts").selectAll().where("store_id", "=", tenant.store.id).where("phone", "=", p1).executeTakeFirstOrThrow();
    expect(contact).toMatchObject({ first_name: "Bruno", lifetime_value: 700 });
  });
});

describe("paused stores", () => {
  it("hold their automations until resumed", async () => {
    const t = await server.createTenant();
    await tenants.updateStore(server.db, t.store.id, { recovery_delay_seconds: 1 });
    const body = checkout(newPhone());
    expect((await push("checkouts", body, t)).status).toBe(201);
    await tenants.updateStore(server.db, t.store.id, { paused: true });
    // The recovery comes due while the store is paused: it waits.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect((await jobsFor("checkout_recovery", body.external_id))[0]?.status).toBe("pending");
    await tenants.updateStore(server.db, t.store.id, { paused: false });
    server.worker?.nudge();
    await settled(t.store.id);
    expect(await messagesFor("checkout_recovery", body.external_id)).toHaveLength(1);
  });
});

describe("backfill", () => {
  it("stores a push marked X-Backfill: true and triggers nothing", async () => {
    const phone = newPhone();
    const customerId = uid("hist");
    const o = order(phone, { customer: { external_id: customerId, phone } });
    const headers = { "X-Backfill": "true" };
    const stored = await push("orders", o, tenant, headers);
    expect(stored.status).toBe(201);
    expect(stored.headers.get("x-backfill")).toBe("true");
    expect((await push("orders", order(phone))).headers.get("x-backfill")).toBeNull();
    const c = checkout(phone);
    expect((await push("checkouts", c, tenant, headers)).status).toBe(201);
    expect((await push("shipments", { external_id: uid("ship"), order_external_id: o.external_id, status: "delivered" }, tenant, headers)).status).toBe(201);
    const jobs = await server.db
      .selectFrom("automation_jobs")
      .select("id")
      .where("record_external_id", "in", [o.external_id, c.external_id, customerId])
      .execute();
    expect(jobs).toHaveLength(0);
    expect(await server.db.selectFrom("orders").select("id").where("external_id", "=", o.external_id).execute()).toHaveLength(1);
  });
});

describe("backfilled records fire only what a later write changes", () => {
  const backfill = { "X-Backfill": "true" };

  it("a backfilled checkout schedules no recovery when its tags are patched or it is pushed again unchanged", async () => {
    const body = checkout(newPhone());
    expect((await push("checkouts", body, tenant, backfill)).status).toBe(201);
    expect((await patch("checkouts", body.external_id, { tags: ["seen"] })).status).toBe(200);
    expect((await patch("checkouts", body.external_id, { status: "abandoned" })).status).toBe(200);
    expect((await push("checkouts", body)).status).toBe(200);
    await settled();
    expect(await jobsFor("checkout_recovery", body.external_id)).toHaveLength(0);
    expect(await messagesFor("checkout_recovery", body.external_id)).toHaveLength(0);
  });

  it("a backfilled checkout that later enters abandoned again gets exactly one recovery", async () => {
    const body = checkout(newPhone());
    await push("checkouts", body, tenant, backfill);
    await patch("checkouts", body.external_id, { status: "active" });
    expect(await jobsFor("checkout_recovery", body.external_id)).toHaveLength(0);
    expect((await push("checkouts", body)).status).toBe(200);
    await push("checkouts", body);
    await settled();
    expect(await messagesFor("checkout_recovery", body.external_id)).toHaveLength(1);
  });

  it("a backfilled shipment pushed again with the same status notifies nobody; a new status notifies once", async () => {
    const o = order(newPhone());
    await push("orders", o, tenant, backfill);
    const shipment = { external_id: uid("ship"), order_external_id: o.external_id, status: "in_transit" };
    expect((await push("shipments", shipment, tenant, backfill)).status).toBe(201);
    expect((await push("shipments", shipment)).status).toBe(200);
    expect((await push("shipments", { ...shipment, carrier: "UPS" })).status).toBe(200);
    await settled();
    expect(await jobsFor("shipping_notification", shipment.external_id)).toHaveLength(0);
    await push("shipments", { ...shipment, status: "delivered" });
    await settled();
    const messages = await messagesFor("shipping_notification", shipment.external_id);
    expect(messages.map((m) => (m.content as { shipment: { status: string } }).shipment.status)).toEqual(["delivered"]);
  });

  it("a backfilled customer pushed again unchanged syncs nothing; a change syncs once", async () => {
    const id = uid("hist-customer");
    const body = { external_id: id, phone: newPhone(), first_name: "Lin" };
    await push("customers", body, tenant, backfill);
    expect((await push("customers", body)).status).toBe(200);
    await push("orders", order(body.phone, { customer: body }));
    await settled();
    expect(await jobsFor("contact_sync", id)).toHaveLength(0);
    await push("customers", { ...body, first_name: "Lina" });
    await settled();
    expect(await messagesFor("contact_sync", id)).toHaveLength(1);
  });
});

describe("erasure leaves no personal data", () => {
  /** Every row of every table of the database, as text. */
  async function everyRow(): Promise<Array<{ table: string; row: string }>> {
    const tables = await sql<{ table_name: string }>`
      select table_name from information_schema.tables
      where table_schema = current_schema() and table_type = 'BASE TABLE'`.execute(server.db);
    const rows: Array<{ table: string; row: string }> = [];
    for (const { table_name } of tables.rows) {
      const result = await sql<{ row: string }>`select t::text as row from ${sql.table(table_name)} t`.execute(server.db);
      for (const { row } of result.rows) rows.push({ table: table_name, row });
    }
    return rows;
  }

  it("not in contacts of the customer's earlier phones, messages, job payloads or any other table", async () => {
    const unique = Math.random().toString(36).slice(2, 8);
    const first = newPhone();
    const second = newPhone();
    const id = uid("forget");
    const personal = { first_name: `Quirin${unique}`, last_name: `Zebedee${unique}`, email: `q.${unique}@example.org`, locale: "de-CH", tags: [`tag${unique}`] };
    await push("customers", { external_id: id, phone: first, ...personal, lifetime_value: 4200 });
    await settled();
    // The phone changes: the first phone's contact keeps what was synced to it.
    await push("orders", order(second, { customer: { external_id: id, phone: second, ...personal } }));
    await push("checkouts", checkout(second, { customer: { external_id: id, phone: second } }));
    await settled();
    const beforeErasure = (await everyRow()).filter(({ row }) => row.includes(personal.email));
    expect(beforeErasure.map(({ table }) => table)).toContain("contacts");

    expect((await server.request("DELETE", `/api/v1/stores/${tenant.store.id}/customers/${id}`, { key: tenant.key })).status).toBe(204);

    const needles = [first, second, first.slice(1), second.slice(1), personal.first_name, personal.last_name, personal.email, personal.tags[0] ?? ""];
    const leaks = (await everyRow()).filter(({ row }) => needles.some((needle) => row.includes(needle)));
    expect(leaks).toEqual([]);
  });
});

describe("one transaction with the write", () => {
  it("a push that fails leaves no automation behind", async () => {
    const restore = await refuseInserts(server.db, "orders", "nope-");
    try {
      const id = uid("never");
      const res = await push("orders", order(newPhone(), { external_id: uid("nope"), customer: { external_id: id, phone: newPhone() } }));
      expect(res.status).toBe(500);
      expect(await jobsFor("contact_sync", id)).toHaveLength(0);
    } finally {
      await restore();
    }
  });
});

type Received = { id: string; body: string; headers: http.IncomingHttpHeaders; at: number };

async function receiver(respond: (count: number) => number) {
  const received: Received[] = [];
  const http_ = http.createServer((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk.toString()));
    req.on("end", () => {
      received.push({ id: String(req.headers["x-message-id"]), body, headers: req.headers, at: Date.now() });
      res.statusCode = respond(received.length);
      res.end();
    });
  });
  await new Promise<void>((resolve) => http_.listen(0, "127.0.0.1", () => resolve()));
  return { url: `http://127.0.0.1:${(http_.address() as AddressInfo).port}/hooks`, received, close: () => new Promise<void>((resolve) => http_.close(() => resolve())) };
}

describe("webhook provider", () => {
  const secret = "whsec_test_0123456789abcdef";

  it("POSTs each message signed with HMAC-SHA256 over timestamp and raw body, with a stable id", async () => {
    const hook = await receiver(() => 200);
    const hooked = await startTestServer({ worker: { provider: webhookProvider({ url: hook.url, secret, timeoutMs: 2000 }) } });
    try {
      const t = await hooked.createTenant();
      const body = order(newPhone());
      await hooked.request("POST", `/api/v1/stores/${t.store.id}/orders`, { key: t.key, body });
      await expect.poll(() => hook.received.length, { timeout: 10_000 }).toBeGreaterThanOrEqual(2);
      for (const delivery of hook.received) {
        const signature = String(delivery.headers["x-signature"]);
        const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(signature);
        expect(match).not.toBeNull();
        const expected = createHmac("sha256", secret).update(`${match?.[1]}.${delivery.body}`).digest("hex");
        expect(match?.[2]).toBe(expected);
        expect(Math.abs(Date.now() / 1000 - Number(match?.[1]))).toBeLessThan(60);
        const payload = JSON.parse(delivery.body);
        expect(payload.id).toBe(delivery.id);
        expect(delivery.headers["content-type"]).toBe("application/json");
      }
      const postPurchase = hook.received.map((d) => JSON.parse(d.body)).find((p) => p.flow === "post_purchase");
      expect(postPurchase).toMatchObject({ store_id: t.store.id, to: body.customer.phone, content: { order: { external_id: body.external_id } } });
      const [row] = await hooked.db.selectFrom("messages").select("id").where("id", "=", postPurchase.id).execute();
      expect(row).toBeDefined();
    } finally {
      await hooked.close();
      await hook.close();
    }
  });

  it("retries a failing endpoint with growing backoff, then ends failed and visible with its error", async () => {
    const hook = await receiver(() => 500);
    const hooked = await startTestServer({
      worker: { provider: webhookProvider({ url: hook.url, secret, timeoutMs: 2000 }), maxAttempts: 4, backoffBaseMs: 200, backoffMaxMs: 5000 },
    });
    try {
      const t = await hooked.createTenant();
      const id = uid("failing");
      await hooked.request("POST", `/api/v1/stores/${t.store.id}/customers`, { key: t.key, body: { external_id: id, phone: newPhone() } });
      await expect.poll(async () => (await jobsFor("contact_sync", id, hooked.db))[0]?.status, { timeout: 15_000 }).toBe("failed");
      expect(hook.received).toHaveLength(4);
      expect(new Set(hook.received.map((d) => d.id)).size).toBe(1);
      const gaps = hook.received.slice(1).map((d, i) => d.at - (hook.received[i]?.at ?? 0));
      expect(gaps[0]).toBeGreaterThanOrEqual(90);
      expect(gaps[2]).toBeGreaterThan(gaps[0] ?? 0);
      const [job] = await jobsFor("contact_sync", id, hooked.db);
      expect(job).toMatchObject({ attempts: 4, last_error: "webhook answered 500" });

      const activity = await hooked.request("GET", `/admin/v1/stores/${t.store.id}/activity`, { key: ADMIN_TOKEN });
      expect(activity.status).toBe(200);
      expect(activity.body.runs[0]).toMatchObject({ flow: "contact_sync", record_external_id: id, status: "failed", attempts: 4, error: "webhook answered 500" });
      expect(activity.body.messages[0]).toMatchObject({ flow: "contact_sync", status: "failed", run_id: job?.id });
    } finally {
      await hooked.close();
      await hook.close();
    }
  });
});

describe("activity", () => {
  it("lists a store's runs and messages newest first, for the operator only", async () => {
    const t = await server.createTenant();
    await tenants.updateStore(server.db, t.store.id, { recovery_delay_seconds: 0 });
    const first = order(newPhone());
    await push("orders", first, t);
    await settled(t.store.id);
    await push("checkouts", checkout(newPhone()), t);
    await settled(t.store.id);
    const res = await server.request("GET", `/admin/v1/stores/${t.store.id}/activity?limit=10`, { key: ADMIN_TOKEN });
    expect(res.status).toBe(200);
    const flows = res.body.runs.map((run: { flow: string }) => run.flow);
    expect(flows[0]).toBe("checkout_recovery");
    expect(flows).toContain("post_purchase");
    const created = res.body.runs.map((run: { created_at: string }) => run.created_at);
    expect([...created].sort().reverse()).toEqual(created);
    expect(res.body.messages.length).toBeGreaterThanOrEqual(3);
    expect((await server.request("GET", `/admin/v1/stores/${t.store.id}/activity`, { key: t.key })).status).toBe(401);
    expect((await server.request("GET", `/admin/v1/stores/99999999/activity`, { key: ADMIN_TOKEN })).status).toBe(404);
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
      await expect.poll(async () => (await jobOf(free.external_id))?.status, { timeout: 5000, interval: 25 }).toBe("succeeded");
      await expect.poll(async () => (await jobOf(held.external_id))?.status, { timeout: 5000, interval: 25 }).toBe("running");
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
    // One slot, a slow local delivery, and a poll far away: the second push's nudge finds the slot busy.
    const slow: MessagingProvider = { name: "record", external: false, deliver: () => new Promise((resolve) => setTimeout(resolve, 300)) };
    const own = await startTestServer({ worker: { concurrency: 1, pollIntervalMs: 10_000, provider: slow } });
    try {
      const t = await own.createTenant();
      const started = Date.now();
      const first = order(newPhone());
      expect((await own.request("POST", `/api/v1/stores/${t.store.id}/orders`, { key: t.key, body: first })).status).toBe(201);
      await new Promise((resolve) => setTimeout(resolve, 100));
      const second = order(newPhone());
      expect((await own.request("POST", `/api/v1/stores/${t.store.id}/orders`, { key: t.key, body: second })).status).toBe(201);
      for (;;) {
        const sent = await own.db.selectFrom("messages").select("id").where("store_id", "=", t.store.id).where("flow", "=", "post_purchase").execute();
        if (sent.length === 2) break;
        expect(Date.now() - started).toBeLessThan(5_000);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      expect(Date.now() - started).toBeLessThan(3_000);
    } finally {
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
    const pooled = await startTestServer({ worker: { concurrency: 2, provider: webhookProvider({ url, secret: "pool-secret-0123456789", timeoutMs: 20_000 }) } });
    try {
      const t = await pooled.createTenant();
      const push = (i: number) =>
        pooled.request("POST", `/api/v1/stores/${t.store.id}/customers`, { key: t.key, body: { external_id: `pool-${i}`, phone: newPhone() } });
      expect((await push(0)).status).toBe(201);
      await expect.poll(() => received.length, { timeout: 5000 }).toBe(1);
      for (let i = 1; i <= 6; i++) expect((await push(i)).status).toBe(201);
      // Six more messages delivered through the one free slot while the first still hangs.
      await expect.poll(() => received.length, { timeout: 10_000 }).toBe(7);
      release();
      await expect
        .poll(async () => (await pooled.db.selectFrom("automation_jobs").select("id").where("store_id", "=", t.store.id).where("status", "=", "succeeded").execute()).length, { timeout: 10_000 })
        .toBe(7);
    } finally {
      release();
      await pooled.close();
      hook.closeAllConnections();
      await new Promise<void>((resolve) => hook.close(() => resolve()));
    }
  });
});

/**
 * Runs `check` on a fresh database of its own with one team and one store (a
 * single shop's service), whose statistics a plan's test may set as it likes.
 */
async function withOneStore(check: (db: Db, storeId: number) => Promise<void>): Promise<void> {
  const database = await createTestDatabase();
  try {
    const { db } = database.handle;
    const store = await sql<{ id: number }>`
      with team as (insert into teams (name) values ('plan') returning id)
      insert into stores (team_id, name) select id, 'plan' from team returning id`.execute(db);
    const storeId = store.rows[0]?.id;
    if (storeId === undefined) throw new Error("no store");
    await check(db, storeId);
  } finally {
    await database.drop();
  }
}

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
      const literal = (value: unknown) => (typeof value === "number" ? String(value) : `'${String(value).replace(/'/g, "''")}'`);
      await sql`set plan_cache_mode = force_generic_plan`.execute(db);
      const plans = async (moment: string) => {
        for (const [name, { sql: text, parameters }] of Object.entries(statements)) {
          await db.executeQuery(CompiledQuery.raw(`prepare cancelling_${name} as ${text}`));
          const explained = await db.executeQuery<{ "QUERY PLAN": unknown }>(CompiledQuery.raw(`explain (format json) execute cancelling_${name}(${parameters.map(literal).join(", ")})`));
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

describe("watching the queue", () => {
  it("counts the last hour's failed automations from the index of failed jobs, not by reading every job ever written", async () => {
    await withOneStore(async (db, storeId) => {
      // 20,000 jobs that ended well, three that failed within the hour and two that failed before it.
      await sql`
        insert into automation_jobs (store_id, flow, dedupe_key, record_type, record_id, record_external_id, status, finished_at)
        select ${storeId}::bigint, 'post_purchase', 'ended:' || g, 'order', g, 'order-' || g,
          case when g <= 5 then 'failed' else 'succeeded' end, now() - case when g <= 2 then interval '2 hours' else interval '1 minute' end
        from generate_series(1, 20000) as g`.execute(db);
      const { sql: text } = failedInLastHour.compile(db);
      for (const moment of ["no statistics", "analyzed"]) {
        if (moment === "analyzed") await sql`analyze`.execute(db);
        const explained = await db.executeQuery<{ "QUERY PLAN": [{ Plan: { "Shared Hit Blocks": number; "Shared Read Blocks": number } }] }>(CompiledQuery.raw(`explain (analyze, buffers, format json) ${text}`));
        const top = explained.rows[0]?.["QUERY PLAN"][0].Plan;
        const pages = top ? top["Shared Hit Blocks"] + top["Shared Read Blocks"] : Infinity;
        const plan = JSON.stringify(explained.rows[0]?.["QUERY PLAN"]);
        expect({ moment, index: plan.includes('"Index Name":"automation_jobs_failed_idx"'), pages, few: pages <= 20 }).toMatchObject({ moment, index: true, few: true });
      }
      expect((await failedInLastHour.execute(db)).rows).toEqual([{ flow: "post_purchase", n: 3 }]);
    });
  });
});

describe("taking due jobs", () => {
  it("reads the index of due jobs in their order, first due first, whatever the statistics say: one shop, its tables analyzed, a backlog", async () => {
    await withOneStore(async (db, storeId) => {
      // A backlog of 5,000 due jobs, first due first by id.
      await sql`
        insert into automation_jobs (store_id, flow, dedupe_key, record_type, record_id, record_external_id, run_at)
        select ${storeId}::bigint, 'post_purchase', 'plan:' || g, 'order', g, 'order-' || g, now() - make_interval(secs => 10000 - g)
        from generate_series(1, 5000) as g`.execute(db);
      // Statistics of the moment: the store not paused, every job due.
      await sql`analyze`.execute(db);
      const { sql: text, parameters } = dueJobsToLock(db, 250).compile();
      const explained = await db.executeQuery<{ "QUERY PLAN": unknown }>(CompiledQuery.raw(`explain (format json) ${text}`, [...parameters]));
      const plan = JSON.stringify(explained.rows[0]?.["QUERY PLAN"]);
      // The first 250 from the index, in its order: never every due job read and sorted.
      expect(plan).toContain('"Index Name":"automation_jobs_due_idx"');
      expect(plan).not.toContain('"Node Type":"Sort"');
      const taken = await db.transaction().execute((trx) => lockDueJobs(trx, 250));
      expect(taken.map((job) => Number(job.record_id))).toEqual(Array.from({ length: 250 }, (_, i) => i + 1));
    });
  });

  it("reads no further than the jobs whose time has come: thousands of recoveries an hour away are not read at each claim, whatever the statistics, in a plan made for every run too", async () => {
    await withOneStore(async (db, storeId) => {
      // An hour of abandoned checkouts waiting for the store's recovery delay, and ten jobs due.
      await sql`
        insert into automation_jobs (store_id, flow, dedupe_key, record_type, record_id, record_external_id, run_at)
        select ${storeId}::bigint, 'checkout_recovery', 'waiting:' || g, 'checkout', g, 'checkout-' || g, now() + make_interval(secs => 3600 - g % 600)
        from generate_series(1, 5000) as g`.execute(db);
      await sql`
        insert into automation_jobs (store_id, flow, dedupe_key, record_type, record_id, record_external_id, run_at)
        select ${storeId}::bigint, 'post_purchase', 'due:' || g, 'order', g, 'order-' || g, now() - make_interval(secs => 100 - g)
        from generate_series(1, 10) as g`.execute(db);
      const { sql: text, parameters } = dueJobsToLock(db, 250).compile();
      type Node = { "Index Name"?: string; "Index Cond"?: string; "Shared Hit Blocks": number; "Shared Read Blocks": number; Plans?: Node[] };
      const nodes = (node: Node): Node[] => [node, ...(node.Plans ?? []).flatMap(nodes)];
      const read = async (session: Db, moment: string, explain: string, parameters: readonly unknown[] = []) => {
        const explained = await session.executeQuery<{ "QUERY PLAN": [{ Plan: Node }] }>(CompiledQuery.raw(`explain (analyze, buffers, format json) ${explain}`, [...parameters]));
        const top = explained.rows[0]?.["QUERY PLAN"][0].Plan;
        const index = top && nodes(top).find((node) => node["Index Name"] === "automation_jobs_due_idx");
        const pages = top ? top["Shared Hit Blocks"] + top["Shared Read Blocks"] : Infinity;
        // The index of due jobs, read up to now: a few pages of it and of the jobs, never the 5,000 waiting ones.
        expect({ moment, cond: index?.["Index Cond"], pages, few: pages <= 40 }).toMatchObject({ moment, cond: expect.stringContaining("run_at <= now()"), few: true });
      };
      const literal = (value: unknown) => (typeof value === "number" ? String(value) : `'${String(value).replace(/'/g, "''")}'`);
      // One session: a prepared statement, and how it is planned, are its own.
      const moments = (moment: string) =>
        db.connection().execute(async (session) => {
          await read(session, `${moment}, planned for its values`, text, parameters);
          await sql`set plan_cache_mode = force_generic_plan`.execute(session);
          await session.executeQuery(CompiledQuery.raw(`prepare due_jobs as ${text}`));
          await read(session, `${moment}, planned once for every run`, `execute due_jobs(${parameters.map(literal).join(", ")})`);
          await session.executeQuery(CompiledQuery.raw("deallocate due_jobs"));
          await sql`reset plan_cache_mode`.execute(session);
        });
      await moments("no statistics");
      await sql`analyze`.execute(db);
      await moments("analyzed");
      // And a claim takes the ten due, first due first.
      const taken = await db.transaction().execute((trx) => lockDueJobs(trx, 250));
      expect(taken.map((job) => Number(job.record_id))).toEqual(Array.from({ length: 10 }, (_, i) => i + 1));
    });
  });
});
