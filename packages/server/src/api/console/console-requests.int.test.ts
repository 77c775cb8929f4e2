import net from "node:net";
import { describe, expect, it } from "vitest";
import { failure, server, signedInTenant, withConsoleServer } from "../../../test/console.js";

withConsoleServer();

const order = (id: string, extra: Record<string, unknown> = {}) => ({
  external_id: id,
  placed_at: "2026-11-20T10:00:00Z",
  total_price: 5,
  customer: { phone: "+14155550188", email: "ada@example.com", first_name: "Ada" },
  ...extra,
});

/** Sends `request` on a raw socket, and resets the connection (RST) as soon as an answer has come: that answer. */
function resetAfterAnswer(request: string): Promise<string> {
  const { port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: "127.0.0.1", port: Number(port) }, () => socket.write(request));
    socket.once("data", (chunk: Buffer) => {
      socket.resetAndDestroy();
      resolve(chunk.toString());
    });
    socket.on("error", reject);
  });
}

describe("the request log, as an integrator debugs a call", () => {
  it("opens a refused call to its real path, key, code, details and bodies, phones, e-mails and names masked", async () => {
    const owner = await signedInTenant();
    const refused = await server.request("POST", `/api/v1/stores/${owner.store.id}/orders`, { key: owner.key, body: order("o-bad", { total_price: -1 }) });
    expect(refused.status).toBe(422);
    const stored = await server.request("GET", `/api/v1/stores/${owner.store.id}/customers/%2B14155550188`, { key: owner.key });
    await server.requestLog.flush();

    const [entry] = await owner.browser.client.requests.list.query({ store_id: owner.store.id, status: "422" });
    expect(entry).toMatchObject({ path: `/api/v1/stores/${owner.store.id}/orders`, status: 422, code: "validation_failed", external_id: "o-bad", key: { last4: owner.key.slice(-4) } });
    const detail = await owner.browser.client.live.detail.query({ store_id: owner.store.id, id: entry?.id ?? 0 });
    expect(detail).toMatchObject({ status: 422, code: "validation_failed", details: [{ path: "total_price", message: expect.any(String) }] });
    expect(JSON.parse(detail.request_body ?? "")).toEqual({ ...order("o-bad", { total_price: -1 }), customer: { phone: "+14•••88", email: "a•••@example.com", first_name: "A•••" } });
    expect(JSON.parse(detail.response_body ?? "")).toMatchObject({ code: "validation_failed", details: [{ path: "total_price" }] });

    // A phone in the path is masked too; nothing the log keeps names the customer.
    const [byPhone] = await owner.browser.client.requests.list.query({ store_id: owner.store.id, route: "/api/v1/stores/{store_id}/customers/{external_id}" });
    expect(byPhone?.status).toBe(stored.status);
    expect(byPhone?.path).toBe(`/api/v1/stores/${owner.store.id}/customers/${encodeURIComponent("+14•••88")}`);
    const rows = await server.db.selectFrom("request_log").selectAll().where("store_id", "=", owner.store.id).execute();
    expect(JSON.stringify(rows)).not.toMatch(/4155550188|ada@example|Ada/);
  });

  it("filters by exact status, class, code, route, key, record and request id prefix, pages by cursor, and explains a bad filter", async () => {
    const owner = await signedInTenant();
    const at = `/api/v1/stores/${owner.store.id}/orders`;
    for (let i = 0; i < 3; i++) await server.request("POST", at, { key: owner.key, body: order(`ok-${i}`), headers: { "X-Request-Id": `ok-batch-${i}` } });
    await server.request("POST", at, { key: owner.key, body: order("bad-1", { total_price: "x" }), headers: { "X-Request-Id": "bad-one" } });
    await server.request("GET", `${at}/missing`, { key: owner.key });
    await server.requestLog.flush();
    const list = (filter: Record<string, unknown>) => owner.browser.client.requests.list.query({ store_id: owner.store.id, ...filter });

    expect((await list({ status: "201" })).map((row) => row.external_id).sort()).toEqual(["ok-0", "ok-1", "ok-2"]);
    expect((await list({ status: "4xx" })).map((row) => row.status).sort()).toEqual([404, 422]);
    expect((await list({ code: "validation_failed" })).map((row) => row.request_id)).toEqual(["bad-one"]);
    expect((await list({ route: "/api/v1/stores/{store_id}/orders/{external_id}" })).map((row) => row.status)).toEqual([404]);
    expect((await list({ external_id: "ok-1" })).map((row) => row.request_id)).toEqual(["ok-batch-1"]);
    expect((await list({ request_id: "ok-batch" })).map((row) => row.request_id).sort()).toEqual(["ok-batch-0", "ok-batch-1", "ok-batch-2"]);
    expect(await list({ request_id: "ok_batch" })).toEqual([]);
    const keyId = (await owner.browser.client.keys.list.query())[0]?.id;
    expect(await list({ key_id: keyId })).toHaveLength(5);

    const first = await list({ status: "201", limit: 2 });
    const rest = await list({ status: "201", limit: 2, before: { at: first[1]?.at, id: first[1]?.id } });
    expect([...first, ...rest].map((row) => row.external_id).sort()).toEqual(["ok-0", "ok-1", "ok-2"]);

    expect(await failure(list({ status: "42" }))).toMatchObject({ code: "BAD_REQUEST", message: expect.stringContaining("must be a status, such as 422, or a class") });
    expect(await failure(list({ code: "Not A Code" }))).toMatchObject({ code: "BAD_REQUEST", message: expect.stringContaining("must be an error code") });
  });

  it("keeps no bodies of a store's successful calls when told not to, and still keeps a refusal's", async () => {
    const owner = await signedInTenant();
    const updated = await owner.browser.client.stores.update.mutate({ id: owner.store.id, log_bodies: false });
    expect(updated.log_bodies).toBe(false);
    const at = `/api/v1/stores/${owner.store.id}/orders`;
    // The key's access is cached by every process until the store's change reaches it.
    await expect.poll(async () => {
      await server.request("POST", at, { key: owner.key, body: order(`quiet-${Date.now()}`) });
      await server.requestLog.flush();
      const [latest] = await owner.browser.client.requests.list.query({ store_id: owner.store.id, status: "201", limit: 1 });
      return (await owner.browser.client.live.detail.query({ store_id: owner.store.id, id: latest?.id ?? 0 })).request_body;
    }).toBeNull();
    await server.request("POST", at, { key: owner.key, body: order("loud", { total_price: -3 }) });
    await server.requestLog.flush();
    const [refused] = await owner.browser.client.requests.list.query({ store_id: owner.store.id, status: "422" });
    const detail = await owner.browser.client.live.detail.query({ store_id: owner.store.id, id: refused?.id ?? 0 });
    expect(JSON.parse(detail.request_body ?? "{}")).toMatchObject({ external_id: "loud", total_price: -3 });
    const audit = await owner.browser.client.team.audit.query({});
    expect(JSON.stringify(audit)).toContain("call bodies not kept");
  });

  it("keeps the calls refused before any procedure ran, made with the team's own key: too large, unknown path, wrong method", async () => {
    const owner = await signedInTenant();
    const stranger = await signedInTenant();
    const base = `/api/v1/stores/${owner.store.id}`;
    const tooLarge = await server.request("POST", `${base}/orders`, { key: owner.key, rawBody: `{"external_id":"big","pad":"${"x".repeat(1_100_000)}"}`, headers: { "Content-Type": "application/json", "X-Request-Id": "too-large" } });
    expect(tooLarge.status).toBe(413);
    // A client that resets its connection once it has read the 413, its body still going out: kept the same.
    const reset = await resetAfterAnswer(`POST ${base}/orders HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${owner.key}\r\nContent-Type: application/json\r\nContent-Length: 2000000\r\nX-Request-Id: too-large-reset\r\n\r\n{"pad":"${"x".repeat(200_000)}`);
    expect(reset).toMatch(/^HTTP\/1\.1 413 /);
    const unknownPath = await server.request("POST", `${base}/invoices`, { key: owner.key, body: {}, headers: { "X-Request-Id": "unknown-path" } });
    expect(unknownPath.status).toBe(404);
    const wrongMethod = await server.request("DELETE", `${base}/orders`, { key: owner.key, headers: { "X-Request-Id": "wrong-method" } });
    expect(wrongMethod.status).toBe(405);
    // Not the team's: another team's key, an unknown key, no key. None of these is this store's to see.
    await server.request("POST", `${base}/invoices`, { key: stranger.key, body: {}, headers: { "X-Request-Id": "their-key" } });
    await server.request("POST", `${base}/invoices`, { key: "k".repeat(24), body: {}, headers: { "X-Request-Id": "unknown-key" } });
    await server.request("POST", `${base}/invoices`, { body: {}, headers: { "X-Request-Id": "no-key" } });
    await server.requestLog.flush();
    // The attribution is read asynchronously after the answer: the log shows them once it has.
    await expect
      .poll(async () => {
        await server.requestLog.flush();
        return (await owner.browser.client.requests.list.query({ store_id: owner.store.id })).map((row) => [row.request_id, row.status, row.code, row.path]).sort();
      })
      .toEqual([
        ["too-large", 413, tooLarge.body.code, `${base}/orders`],
        ["too-large-reset", 413, tooLarge.body.code, `${base}/orders`],
        ["unknown-path", 404, "not_found", `${base}/invoices`],
        ["wrong-method", 405, wrongMethod.body.code, `${base}/orders`],
      ].sort());
    const theirs = await stranger.browser.client.requests.list.query({ store_id: stranger.store.id });
    expect(theirs.map((row) => row.request_id)).not.toContain("their-key");
  });

  it("keeps a refusal whose details name a key no JSON column can hold, and the calls written with it", async () => {
    const owner = await signedInTenant();
    const at = `/api/v1/stores/${owner.store.id}/orders`;
    const strict = { "Content-Type": "application/json", Prefer: "handling=strict" };
    const refused = await server.request("POST", at, { key: owner.key, rawBody: JSON.stringify(order("o-odd")).replace(/}$/, String.raw`,"k\uDC00":1}`), headers: { ...strict, "X-Request-Id": "odd-key" } });
    expect(refused.status).toBe(422);
    expect(refused.body.details).toEqual([{ path: "k\uDC00", message: expect.any(String) }]);
    await server.request("POST", at, { key: owner.key, body: order("o-fine"), headers: { "X-Request-Id": "fine" } });
    await server.requestLog.flush();
    const rows = await owner.browser.client.requests.list.query({ store_id: owner.store.id });
    expect(rows.map((row) => row.request_id).sort()).toEqual(["fine", "odd-key"]);
    const detail = await owner.browser.client.live.detail.query({ store_id: owner.store.id, id: rows.find((row) => row.request_id === "odd-key")?.id ?? 0 });
    expect(detail.details).toEqual([{ path: "k\uFFFD", message: expect.any(String) }]);
  });

  it("counts calls with keys no team has on the store's paths by the key's first characters, never keeping the key", async () => {
    const owner = await signedInTenant();
    const stranger = await signedInTenant();
    const unknownKey = "Zq9xUNKNOWNkeyABCDEFGHIJ";
    for (let i = 0; i < 3; i++) expect((await server.request("POST", `/api/v1/stores/${owner.store.id}/orders`, { key: unknownKey, body: order(`u-${i}`) })).status).toBe(401);
    expect((await server.request("GET", `/api/v1/stores/${owner.store.id}/orders/x`, { headers: { Authorization: "Bearer not-a-key" } })).status).toBe(401);
    // Not a store's path of anyone's: nothing to count.
    expect((await server.request("GET", "/api/v1/stores/999999999/orders/x", { key: unknownKey })).status).toBe(401);
    await server.requestLog.flush();
    const counted = await owner.browser.client.unknownKeys.list.query({ store_id: owner.store.id });
    expect(counted.map((row) => [row.key_prefix, row.calls]).sort()).toEqual([["(not a key)", 1], ["Zq9x", 3]]);
    const stored = await server.db.selectFrom("unknown_key_calls").selectAll().execute();
    expect(JSON.stringify(stored)).not.toContain(unknownKey.slice(4));
    expect(stored.some((row) => Number(row.store_id) === 999999999)).toBe(false);
    // The store's own log holds none of them (they are not the team's calls), and another team sees no count.
    expect((await owner.browser.client.requests.list.query({ store_id: owner.store.id })).map((row) => row.status)).not.toContain(401);
    expect(await failure(stranger.browser.client.unknownKeys.list.query({ store_id: owner.store.id }))).toMatchObject({ code: "NOT_FOUND" });
  });

  it("shows another team's calls to no one: their ids answer as unknown ones do", async () => {
    const owner = await signedInTenant();
    const stranger = await signedInTenant();
    await server.request("POST", `/api/v1/stores/${owner.store.id}/orders`, { key: owner.key, body: order("secret", { total_price: -1 }) });
    await server.requestLog.flush();
    const [entry] = await owner.browser.client.requests.list.query({ store_id: owner.store.id });
    const theirs = await failure(stranger.browser.client.live.detail.query({ store_id: owner.store.id, id: entry?.id ?? 0 }));
    const unknown = await failure(stranger.browser.client.live.detail.query({ store_id: 999_999_999, id: entry?.id ?? 0 }));
    expect(theirs).toMatchObject({ code: "NOT_FOUND" });
    expect(theirs).toEqual(unknown);
    // Their own store, another store's call id: not found either.
    expect(await failure(stranger.browser.client.live.detail.query({ store_id: stranger.store.id, id: entry?.id ?? 0 }))).toMatchObject({ code: "NOT_FOUND" });
    expect(await failure(stranger.browser.client.requests.list.query({ store_id: owner.store.id }))).toMatchObject({ code: "NOT_FOUND" });
  });
});
