import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AuthenticationError, CommerceIngestClient, ValidationError } from "../src/index.js";
import { SERVICE_TEST_TIMEOUT_MS, startService } from "./server.js";

type Sent = { path: string; items: Array<{ external_id: string }> };

/** A fetch that answers each batch as the service would: 201 per item, 422 for an item whose id starts with "bad"; `hold` keeps answers until released. */
function batchFetch(options: { status?: number; hold?: boolean } = {}) {
  const sent: Sent[] = [];
  const held: Array<() => void> = [];
  const fetchImpl: typeof fetch = async (input, init = {}) => {
    const path = new URL(input instanceof Request ? input.url : String(input)).pathname;
    const { items } = JSON.parse(init.body as string) as { items: Array<{ external_id: string }> };
    sent.push({ path, items });
    if (options.hold) await new Promise<void>((resolve) => held.push(resolve));
    if (options.status) return new Response(JSON.stringify({ error: "Invalid API key", code: "invalid_api_key" }), { status: options.status, headers: { "Content-Type": "application/json" } });
    const results = items.map((item) =>
      item.external_id.startsWith("bad")
        ? { status: 422, external_id: item.external_id, error: "Invalid request body", code: "validation_failed", details: [{ path: "total_price", message: "must be a number" }] }
        : { status: 201, external_id: item.external_id, record: { external_id: item.external_id } },
    );
    return new Response(JSON.stringify({ results, counts: { created: 0, updated: 0, failed: 0 } }), { status: 200, headers: { "Content-Type": "application/json", "X-Request-Id": `batch-${sent.length}` } });
  };
  return { fetch: fetchImpl, sent, release: () => held.splice(0).forEach((resolve) => resolve()) };
}

const client = (fetchImpl: typeof fetch) => new CommerceIngestClient({ apiKey: "k".repeat(24), baseUrl: "http://api.test", fetch: fetchImpl, maxRetries: 0 });
const order = (id: string) => ({ external_id: id, placed_at: "2026-11-20T14:03:00Z", total_price: 10, customer: { phone: "+14155552671" } });

describe("a push queue", () => {
  it("gathers pushes into one batch and answers each with its own result", async () => {
    const scripted = batchFetch();
    const queue = client(scripted.fetch).queue(7, { lingerMs: 5 });
    const answers = await Promise.allSettled(["a", "b", "bad-c", "d"].map((id) => queue.orders.push(order(id))));
    expect(scripted.sent).toEqual([{ path: "/api/v1/stores/7/orders/batch", items: ["a", "b", "bad-c", "d"].map(order) }]);
    expect(answers.map((answer) => (answer.status === "fulfilled" ? [answer.value.created, answer.value.data, answer.value.requestId] : answer.reason))).toEqual([
      [true, { external_id: "a" }, "batch-1"],
      [true, { external_id: "b" }, "batch-1"],
      expect.objectContaining({ name: "ValidationError", code: "validation_failed", details: [{ path: "total_price", message: "must be a number" }] }),
      [true, { external_id: "d" }, "batch-1"],
    ]);
    expect((answers[2] as PromiseRejectedResult).reason).toBeInstanceOf(ValidationError);
  });

  it("sends a batch when it is full, one batch at a time per resource, in the order pushed", async () => {
    const scripted = batchFetch();
    const queue = client(scripted.fetch).queue(7, { maxBatch: 2, lingerMs: 60_000 });
    const pushes = ["1", "2", "3", "4", "5"].map((id) => queue.orders.push(order(id)));
    await Promise.all(pushes.slice(0, 4));
    await queue.flush();
    await Promise.all(pushes);
    expect(scripted.sent.map((batch) => batch.items.map((item) => item.external_id))).toEqual([["1", "2"], ["3", "4"], ["5"]]);
  });

  it("holds at most maxPending pushes: a producer past it waits for room", async () => {
    const scripted = batchFetch({ hold: true });
    const queue = client(scripted.fetch).queue(7, { maxBatch: 2, maxPending: 2, lingerMs: 0 });
    const first = [queue.orders.push(order("1")), queue.orders.push(order("2"))];
    let thirdIn = false;
    const third = queue.orders.push(order("3")).then((result) => ((thirdIn = true), result));
    // The first batch is in flight and held: the third push waits outside the queue.
    await expect.poll(() => scripted.sent.length).toBe(1);
    expect([queue.pending, thirdIn]).toEqual([2, false]);
    scripted.release();
    await Promise.all(first);
    await expect.poll(() => scripted.sent.length).toBe(2);
    scripted.release();
    expect((await third).created).toBe(true);
    expect(thirdIn).toBe(true);
  });

  it("fails each push of a batch the service refused whole, and takes no push once closed", async () => {
    const queue = client(batchFetch({ status: 401 }).fetch).queue(7, { lingerMs: 1 });
    const refused = await Promise.allSettled([queue.customers.push({ phone: "+14155552671" }), queue.customers.push({ phone: "+14155552672" })]);
    expect(refused.map((answer) => answer.status === "rejected" && answer.reason instanceof AuthenticationError && (answer.reason).code)).toEqual(["invalid_api_key", "invalid_api_key"]);
    await queue.close();
    await expect(queue.customers.push({ phone: "+14155552671" })).rejects.toMatchObject({ name: "CommerceIngestError", message: "The queue is closed" });
  });
});

describe("a push queue against the service", () => {
  let service: Awaited<ReturnType<typeof startService>>;
  beforeAll(async () => {
    service = await startService();
  }, SERVICE_TEST_TIMEOUT_MS);
  afterAll(() => service?.stop());

  it("stores every pushed record, each answered as created, in batches", { timeout: SERVICE_TEST_TIMEOUT_MS }, async () => {
    const tenant = await service.tenant();
    const requests: string[] = [];
    const api = new CommerceIngestClient({ apiKey: tenant.apiKey, baseUrl: service.url, onRequest: ({ path }) => requests.push(path) });
    const queue = api.queue(tenant.storeId);
    const answers = await Promise.all(Array.from({ length: 300 }, (_, i) => queue.orders.push(order(`queued-${i}`))));
    await queue.close();
    expect(answers.every((answer) => answer.created && answer.status === 201)).toBe(true);
    // Every request the queue made was a batch.
    expect(requests.length).toBeGreaterThan(0);
    expect(requests.every((path) => path.endsWith("/orders/batch"))).toBe(true);
    expect((await api.orders.retrieve(tenant.storeId, "queued-299")).data.external_id).toBe("queued-299");
  });
});
