import { createHmac, randomUUID } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { consoleBrowser, failure, invite, joinByInvitation } from "../../../test/console.js";
import { orderBody, startTestServer, uid, type TestServer } from "../../../test/helpers.js";

let server: TestServer;
let strict: TestServer;

beforeAll(async () => {
  // A worker that gives up after two attempts, quickly: a failed message is reached in well under a second.
  server = await startTestServer({ worker: { maxAttempts: 2, backoffBaseMs: 20, backoffMaxMs: 40 } });
  // As deployed: stores' endpoints may not be on private addresses.
  strict = await startTestServer({ endpoints: { allowPrivate: false } });
});
afterAll(async () => {
  await server?.close();
  await strict?.close();
});

let seq = 0;
async function signedIn(on: TestServer = server) {
  const tenant = await on.createTenant();
  const email = `delivery.${Date.now()}.${++seq}@example.com`;
  const { token } = await invite(on, tenant.team.id, email);
  const browser = consoleBrowser(on);
  await joinByInvitation(on, browser, token);
  return { ...tenant, email, client: browser.client };
}

type Received = { id: string; body: string; signature: string };

/** A store's endpoint on loopback, answering `status` with `answer` (both changeable) and keeping what it received. */
async function endpoint(status = 200, answer = "got it") {
  const state = { status, answer, received: [] as Received[] };
  const receiver = http.createServer((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk.toString()));
    req.on("end", () => {
      state.received.push({ id: String(req.headers["x-message-id"]), body, signature: String(req.headers["x-signature"]) });
      res.statusCode = state.status;
      res.end(state.answer);
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", () => resolve()));
  return {
    state,
    url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/messages`,
    close: () => new Promise<void>((resolve) => receiver.close(() => resolve())),
  };
}

/** Whether a `t=...,v1=...[,v1=...]` signature holds a v1 made with `secret` over the body received. */
function signedWith(delivery: Received, secret: string): boolean {
  const parts = delivery.signature.split(",").map((part) => part.split("="));
  const t = parts.find(([key]) => key === "t")?.[1];
  const expected = createHmac("sha256", secret).update(`${t}.${delivery.body}`).digest("hex");
  return parts.some(([key, value]) => key === "v1" && value === expected);
}

const pushOrder = (tenant: { store: { id: number }; key: string }, phone: string, external_id = uid("o"), customer = uid("c")) =>
  server.request("POST", `/api/v1/stores/${tenant.store.id}/orders`, { key: tenant.key, body: orderBody({ external_id, customer: { external_id: customer, phone, first_name: "Ada" } }) });

/** The post-purchase messages an endpoint received (a new customer's contact sync goes there too). */
const postPurchases = (received: Received[]) => received.filter((delivery) => !delivery.id.startsWith("test_") && (JSON.parse(delivery.body) as { flow: string }).flow === "post_purchase");

describe("a store's own endpoint, set and run from the console", () => {
  it("is set with a secret shown once, answers a test event, takes the store's messages signed with it, and rolls the secret with an overlap", async () => {
    const owner = await signedIn();
    const hook = await endpoint(200, "got it");
    try {
      expect(await owner.client.endpoint.get.query({ store_id: owner.store.id })).toBeNull();
      const set = await owner.client.endpoint.set.mutate({ store_id: owner.store.id, url: hook.url });
      expect(set).toMatchObject({ created: true, secret: expect.stringMatching(/^whsec_[0-9a-f]{48}$/) });
      const secret = set.secret ?? "";
      // Never again: not in the endpoint's view, nor when its URL changes.
      expect(JSON.stringify(await owner.client.endpoint.get.query({ store_id: owner.store.id }))).not.toContain(secret);
      expect(await owner.client.endpoint.set.mutate({ store_id: owner.store.id, url: hook.url })).toEqual({ created: false, secret: null });

      const test = await owner.client.endpoint.test.mutate({ store_id: owner.store.id });
      expect(test).toMatchObject({ url: hook.url, status: 200, answer: "got it", error: null });
      const event = hook.state.received[0];
      expect(event && JSON.parse(event.body)).toMatchObject({ flow: "test", store_id: owner.store.id, id: expect.stringMatching(/^test_/) });
      expect(event && signedWith(event, secret)).toBe(true);

      // The store's messages go to its endpoint now, signed with its secret.
      expect((await pushOrder(owner, "+14155550101")).status).toBe(201);
      await expect.poll(() => postPurchases(hook.state.received).length, { timeout: 10_000 }).toBe(1);
      const message = postPurchases(hook.state.received)[0];
      expect(message && JSON.parse(message.body)).toMatchObject({ flow: "post_purchase", to: "+14155550101" });
      expect(message && signedWith(message, secret)).toBe(true);

      // Rolled: deliveries carry the new secret's signature, and the old one's until the overlap ends.
      const rolled = await owner.client.endpoint.rollSecret.mutate({ store_id: owner.store.id, overlap_hours: 1 });
      expect(rolled.secret).not.toBe(secret);
      expect((await owner.client.endpoint.get.query({ store_id: owner.store.id }))?.previous_valid_until).toEqual(expect.any(String));
      expect((await pushOrder(owner, "+14155550102")).status).toBe(201);
      await expect.poll(() => postPurchases(hook.state.received).length, { timeout: 10_000 }).toBe(2);
      const after = postPurchases(hook.state.received)[1];
      expect(after && signedWith(after, rolled.secret)).toBe(true);
      expect(after && signedWith(after, secret)).toBe(true);
      // With no overlap, the old secret signs nothing more.
      const again = await owner.client.endpoint.rollSecret.mutate({ store_id: owner.store.id, overlap_hours: 0 });
      await owner.client.endpoint.test.mutate({ store_id: owner.store.id });
      const last = hook.state.received.at(-1);
      expect(last && signedWith(last, again.secret)).toBe(true);
      expect(last && signedWith(last, rolled.secret)).toBe(false);

      // Recent deliveries: the test events and the messages, each with its answer.
      const deliveries = await owner.client.endpoint.deliveries.query({ store_id: owner.store.id });
      expect(deliveries).toHaveLength(hook.state.received.length);
      expect(deliveries.every((delivery) => delivery.status === 200 && delivery.answer === "got it" && delivery.url === hook.url)).toBe(true);
      expect(deliveries.filter((delivery) => delivery.message_id === null)).toHaveLength(2);

      const audit = await owner.client.team.audit.query({});
      expect(audit.map((entry) => entry.action)).toEqual(expect.arrayContaining(["endpoint.set", "endpoint.secret_rolled"]));
      expect(JSON.stringify(audit)).not.toContain(secret);

      // Removed: the store's messages go to the service's default again (recorded here), nothing more to the endpoint.
      await owner.client.endpoint.remove.mutate({ store_id: owner.store.id });
      const before = hook.state.received.length;
      expect((await pushOrder(owner, "+14155550103")).status).toBe(201);
      await expect.poll(async () => (await owner.client.messages.list.query({ store_id: owner.store.id, flow: "post_purchase", status: "sent" })).messages.length, { timeout: 10_000 }).toBe(3);
      expect(hook.state.received).toHaveLength(before);
    } finally {
      await hook.close();
    }
  });

  it("refuses loopback, private and link-local endpoints unless the operator allows them, and URLs that are not http", async () => {
    const owner = await signedIn(strict);
    const set = (url: string) => failure(owner.client.endpoint.set.mutate({ store_id: owner.store.id, url }));
    for (const url of ["http://127.0.0.1:8080/hooks", "http://localhost/hooks", "http://10.1.2.3/hooks", "http://169.254.169.254/latest", "http://[::1]/hooks", "http://[fe80::1]/hooks", "http://192.168.0.10/x"]) {
      expect(await set(url)).toMatchObject({ code: "UNPROCESSABLE_CONTENT", message: "Endpoints on loopback, private or link-local addresses are not allowed" });
    }
    for (const url of ["ftp://example.com/hooks", "https://user:pass@example.com/hooks", "not a url", "https://no-such-host.invalid/hooks"]) {
      expect(await set(url)).toMatchObject({ code: "UNPROCESSABLE_CONTENT", message: expect.stringContaining("must be an http or https URL") });
    }
    expect(await strict.db.selectFrom("webhook_endpoints").select("store_id").where("store_id", "=", owner.store.id).execute()).toEqual([]);
  });
});

describe("messages in the console", () => {
  it("shows a failed message's attempts and answers, and sends it again once its endpoint recovers: same id, audited, once", async () => {
    const owner = await signedIn();
    const hook = await endpoint(503, "down for maintenance");
    try {
      await owner.client.endpoint.set.mutate({ store_id: owner.store.id, url: hook.url });
      const orderId = uid("o");
      expect((await pushOrder(owner, "+14155550111", orderId)).status).toBe(201);
      const failed = async () => (await owner.client.messages.list.query({ store_id: owner.store.id, flow: "post_purchase", status: "failed" })).messages;
      await expect.poll(async () => (await failed()).length, { timeout: 10_000 }).toBe(1);
      const [message] = await failed();
      expect(message).toMatchObject({
        flow: "post_purchase",
        status: "failed",
        to_phone: "+14•••11",
        content: { template: "post_purchase", order: { external_id: orderId } },
        run: { status: "failed", attempts: 2, next_try_at: null, record_type: "order", record_external_id: orderId, last_error: "webhook answered 503" },
        attempts: [
          { status: 503, answer: "down for maintenance", error: null, url: hook.url },
          { status: 503, answer: "down for maintenance", error: null, url: hook.url },
        ],
      });
      expect(JSON.stringify(message)).not.toContain("4155550111");

      hook.state.status = 200;
      hook.state.answer = "ok";
      const id = message?.id ?? "";
      expect(await owner.client.messages.resend.mutate({ store_id: owner.store.id, id })).toEqual({ resent: true });
      await expect.poll(async () => (await owner.client.messages.list.query({ store_id: owner.store.id, order: orderId })).messages[0]?.status, { timeout: 10_000 }).toBe("sent");
      // The same message (its id) reached the endpoint: three tries, the last taken.
      expect(postPurchases(hook.state.received).map((delivery) => delivery.id)).toEqual([id, id, id]);
      const [sent] = (await owner.client.messages.list.query({ store_id: owner.store.id, order: orderId })).messages;
      expect(sent?.attempts.map((attempt) => attempt.status)).toEqual([503, 503, 200]);
      // Sending again what is sent does nothing.
      expect(await owner.client.messages.resend.mutate({ store_id: owner.store.id, id })).toEqual({ resent: false });
      expect((await owner.client.team.audit.query({})).filter((entry) => entry.action === "message.resent")).toHaveLength(1);
      expect(postPurchases(hook.state.received)).toHaveLength(3);
    } finally {
      await hook.close();
    }
  });

  it("filters by flow, status, customer and order, pages by cursor, and opens a record's page with its runs and messages", async () => {
    const owner = await signedIn();
    const orders = [uid("o"), uid("o"), uid("o")];
    const customers = [uid("c"), uid("c"), uid("c")];
    for (const [i, orderId] of orders.entries()) expect((await pushOrder(owner, `+1415555012${i}`, orderId, customers[i])).status).toBe(201);
    const list = (filter: Record<string, unknown>) => owner.client.messages.list.query({ store_id: owner.store.id, ...filter });
    await expect.poll(async () => (await list({ flow: "post_purchase", status: "sent" })).messages.length, { timeout: 10_000 }).toBe(3);

    expect((await list({ order: orders[1] })).messages.map((message) => message.run.record_external_id)).toEqual([orders[1]]);
    expect((await list({ customer: customers[2], flow: "post_purchase" })).messages.map((message) => [message.to_phone, message.customer_external_id])).toEqual([["+14•••22", customers[2]]]);
    expect((await list({ status: "failed" })).messages).toEqual([]);
    expect((await list({ flow: "checkout_recovery" })).messages).toEqual([]);
    const first = await list({ flow: "post_purchase", limit: 2 });
    expect(first.messages).toHaveLength(2);
    const rest = await list({ flow: "post_purchase", limit: 2, before: first.next ?? undefined });
    expect(rest.next).toBeNull();
    expect([...first.messages, ...rest.messages].map((message) => message.run.record_external_id).sort()).toEqual([...orders].sort());

    const page = await owner.client.records.get.query({ store_id: owner.store.id, kind: "orders", external_id: orders[0] ?? "" });
    expect(page.record).toMatchObject({ external_id: orders[0], total_price: "10.00" });
    expect(page.runs.map((run) => [run.flow, run.status])).toEqual([["post_purchase", "succeeded"]]);
    expect(page.messages).toMatchObject([{ flow: "post_purchase", status: "sent", to_phone: "+14•••20" }]);
    const customer = await owner.client.records.get.query({ store_id: owner.store.id, kind: "customers", external_id: customers[0] ?? "" });
    expect(customer.messages.map((message) => message.flow).sort()).toEqual(["contact_sync", "post_purchase"]);
    expect(customer.runs.map((run) => run.flow)).toEqual(["contact_sync"]);
    expect(await failure(owner.client.records.get.query({ store_id: owner.store.id, kind: "orders", external_id: "no-such-order" }))).toMatchObject({ code: "NOT_FOUND", message: "Order not found" });
  });

  it("answers another team's store, message and record as it answers unknown ones", async () => {
    const owner = await signedIn();
    const stranger = await signedIn();
    const orderId = uid("o");
    expect((await pushOrder(owner, "+14155550131", orderId)).status).toBe(201);
    await expect.poll(async () => (await owner.client.messages.list.query({ store_id: owner.store.id, flow: "post_purchase" })).messages.length, { timeout: 10_000 }).toBe(1);
    const [message] = (await owner.client.messages.list.query({ store_id: owner.store.id, flow: "post_purchase" })).messages;
    const theirs = { store_id: owner.store.id };
    const calls = [
      () => stranger.client.messages.list.query(theirs),
      () => stranger.client.messages.resend.mutate({ ...theirs, id: message?.id ?? "" }),
      () => stranger.client.records.get.query({ ...theirs, kind: "orders", external_id: orderId }),
      () => stranger.client.endpoint.get.query(theirs),
      () => stranger.client.endpoint.set.mutate({ ...theirs, url: "https://example.com/hooks" }),
      () => stranger.client.endpoint.rollSecret.mutate(theirs),
      () => stranger.client.endpoint.remove.mutate(theirs),
      () => stranger.client.endpoint.test.mutate(theirs),
      () => stranger.client.endpoint.deliveries.query(theirs),
    ];
    for (const call of calls) expect(await failure(call())).toMatchObject({ code: "NOT_FOUND", message: "Store not found" });
    // In its own store, another store's message or an id that is none: 404 alike.
    for (const id of [message?.id ?? "", randomUUID(), "not-a-uuid"]) {
      expect(await failure(stranger.client.messages.resend.mutate({ store_id: stranger.store.id, id }))).toMatchObject({ code: "NOT_FOUND", message: "Message not found" });
    }
    expect(await failure(stranger.client.records.get.query({ store_id: stranger.store.id, kind: "orders", external_id: orderId }))).toMatchObject({ code: "NOT_FOUND", message: "Order not found" });
    expect(await failure(stranger.client.endpoint.test.mutate({ store_id: stranger.store.id }))).toMatchObject({ code: "NOT_FOUND", message: "This store has no endpoint of its own" });
  });
});
