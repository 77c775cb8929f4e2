import { describe, expect, it } from "vitest";
import { consoleBrowser, failure, invite, joinByInvitation, readToEnd, server, signedInTenant, uniqueEmail, withConsoleServer } from "../../../test/console.js";
import { startTestServer } from "../../../test/helpers.js";

withConsoleServer();

describe("stores, activity and the request log", () => {
  it("the overview counts the store's records by kind and its refused calls over the last day and week, with its automation backlog", async () => {
    const owner = await signedInTenant();
    const stranger = await signedInTenant();
    for (const [id, phone] of [["o-1", "+14155550101"], ["o-2", "+14155550102"]] as const) {
      await server.request("POST", `/api/v1/stores/${owner.store.id}/orders`, { key: owner.key, body: { external_id: id, placed_at: "2026-11-20T10:00:00Z", total_price: 5, customer: { phone } } });
    }
    await server.request("POST", `/api/v1/stores/${owner.store.id}/orders`, { key: owner.key, body: { external_id: "bad" } });
    await server.requestLog.flush();
    const day = await owner.browser.client.overview.get.query({ store_id: owner.store.id });
    expect(day).toMatchObject({ range: "24h", bucket_seconds: 3600, totals: { orders: 2, customers: 2, checkouts: 0, shipments: 0, refused: 1 } });
    expect(day.buckets).toHaveLength(24);
    expect(day.backlog.due + day.backlog.scheduled).toBeGreaterThan(0);
    const week = await owner.browser.client.overview.get.query({ store_id: owner.store.id, range: "7d" });
    expect(week).toMatchObject({ bucket_seconds: 6 * 3600, totals: { orders: 2, refused: 1 } });
    expect(week.buckets).toHaveLength(28);
    expect(await failure(stranger.browser.client.overview.get.query({ store_id: owner.store.id }))).toMatchObject({ code: "NOT_FOUND" });
  });

  it("the live view streams the store's calls as they arrive, and opens each to the record it wrote and its runs; to no one else", async () => {
    const owner = await signedInTenant();
    const stranger = await signedInTenant();
    const cookie = (browser: typeof owner.browser) => browser.cookieHeader();
    const signedOut = await fetch(`${server.url}/console/live/${owner.store.id}`);
    expect([signedOut.status, await signedOut.json()]).toEqual([401, { error: "Sign in first", code: "sign_in_required" }]);
    const strangers = await fetch(`${server.url}/console/live/${owner.store.id}`, { headers: { Cookie: cookie(stranger.browser) } });
    expect([strangers.status, await strangers.json()]).toEqual([404, { error: "Store not found", code: "admin_store_not_found" }]);
    const controller = new AbortController();
    const stream = await fetch(`${server.url}/console/live/${owner.store.id}`, { headers: { Cookie: cookie(owner.browser) }, signal: controller.signal });
    expect(stream.headers.get("content-type")).toBe("text/event-stream");
    const reader = stream.body?.getReader();
    let text = "";
    const until = async (test: (events: string) => boolean) => {
      while (!test(text)) {
        const chunk = await reader?.read();
        if (!chunk || chunk.done) throw new Error("the stream ended");
        text += new TextDecoder().decode(chunk.value);
      }
    };
    try {
      await server.request("POST", `/api/v1/stores/${owner.store.id}/orders`, {
        key: owner.key,
        body: { external_id: "live-1", placed_at: "2026-11-20T10:00:00Z", total_price: 5, customer: { phone: "+14155550177" } },
        headers: { "X-Request-Id": "live-push" },
      });
      await server.request("POST", `/api/v1/stores/${owner.store.id}/orders`, { key: owner.key, body: { external_id: "live-2" }, headers: { "X-Request-Id": "live-refused" } });
      await until((events) => events.includes('"request_id":"live-refused"'));
    } finally {
      controller.abort();
    }
    const events = text.split("\n\n").filter((event) => event.includes("event: call")).map((event) => JSON.parse(event.split("data: ")[1] ?? "{}") as { id: number; request_id: string; status: number; record: unknown });
    const pushed = events.find((event) => event.request_id === "live-push");
    expect(pushed).toMatchObject({ status: 201, record: { kind: "orders", external_id: "live-1" } });
    const detail = await owner.browser.client.live.detail.query({ store_id: owner.store.id, id: pushed?.id ?? 0 });
    expect(detail).toMatchObject({ status: 201, record: { kind: "orders", external_id: "live-1", stored: { external_id: "live-1", total_price: "5.00" } } });
    expect(detail.runs.map((run) => run.flow)).toContain("post_purchase");
    const refused = events.find((event) => event.request_id === "live-refused");
    const refusedDetail = await owner.browser.client.live.detail.query({ store_id: owner.store.id, id: refused?.id ?? 0 });
    expect(refusedDetail).toMatchObject({ status: 422, error: "Invalid request body", record: null });
    expect(refusedDetail.details?.map((detail) => detail.path)).toEqual(expect.arrayContaining(["placed_at", "total_price"]));
    expect(await failure(stranger.browser.client.live.detail.query({ store_id: owner.store.id, id: pushed?.id ?? 0 }))).toMatchObject({ code: "NOT_FOUND" });
    // A browser reconnecting with the last call it had gets only the calls after it.
    const resumed = new AbortController();
    const again = await fetch(`${server.url}/console/live/${owner.store.id}`, { headers: { Cookie: cookie(owner.browser), "Last-Event-ID": String(pushed?.id) }, signal: resumed.signal });
    const againReader = again.body?.getReader();
    let resumedText = "";
    try {
      while (!resumedText.includes('"request_id":"live-refused"')) {
        const chunk = await againReader?.read();
        if (!chunk || chunk.done) throw new Error("the stream ended");
        resumedText += new TextDecoder().decode(chunk.value);
      }
    } finally {
      resumed.abort();
    }
    expect(resumedText).not.toContain('"request_id":"live-push"');
  });

  it("the request log pages back through older calls and keeps to a date range", async () => {
    const owner = await signedInTenant();
    for (const id of ["call-1", "call-2", "call-3"]) {
      await server.request("POST", `/api/v1/stores/${owner.store.id}/customers`, { key: owner.key, body: { phone: "+14155552671" }, headers: { "X-Request-Id": id } });
    }
    await server.requestLog.flush();
    const list = (input: Partial<Parameters<typeof owner.browser.client.requests.list.query>[0]>) =>
      owner.browser.client.requests.list.query({ store_id: owner.store.id, ...input }).then((rows) => rows.map((row) => row.request_id));
    const [newest, next] = await owner.browser.client.requests.list.query({ store_id: owner.store.id, limit: 2 });
    expect([newest?.request_id, next?.request_id]).toEqual(["call-3", "call-2"]);
    expect(await list({ before: { at: next?.at ?? "", id: next?.id ?? 0 } })).toEqual(["call-1"]);
    expect(await list({ from: new Date(Date.now() + 60_000).toISOString() })).toEqual([]);
    expect(await list({ to: new Date(Date.now() + 60_000).toISOString(), from: new Date(Date.now() - 60_000).toISOString() })).toEqual(["call-3", "call-2", "call-1"]);
    expect(await failure(owner.browser.client.requests.list.query({ store_id: owner.store.id, from: "yesterday" }))).toMatchObject({ httpStatus: 400 });
  });

  it("the request log keeps the calls refused with the team's own keys: restricted to another store, deleted, to a paused store; never another team's", async () => {
    const owner = await signedInTenant();
    const stranger = await signedInTenant();
    const second = await owner.browser.client.stores.create.mutate({ name: "Second", country: "US" });
    const restricted = await owner.browser.client.keys.create.mutate({ name: "second only", store_id: second.id });
    const push = (key: string, requestId: string) =>
      server.request("POST", `/api/v1/stores/${owner.store.id}/customers`, { key, body: { phone: "+14155552671" }, headers: { "X-Request-Id": requestId } });
    expect((await push(restricted.key, "restricted")).status).toBe(403);
    const doomed = await owner.browser.client.keys.create.mutate({ name: "deleted soon" });
    await owner.browser.client.keys.delete.mutate({ id: doomed.id });
    expect((await push(doomed.key, "deleted")).status).toBe(401);
    expect((await push(stranger.key, "stranger")).status).toBe(403);
    await server.requestLog.flush();
    const log = await owner.browser.client.requests.list.query({ store_id: owner.store.id, status: "4xx" });
    const byId = new Map(log.map((row) => [row.request_id, row]));
    expect(byId.get("restricted")).toMatchObject({ status: 403, error: "API key does not authorize this store", key: { name: "second only", last4: restricted.key.slice(-4) } });
    expect(byId.get("deleted")).toMatchObject({ status: 401, error: "Invalid API key", key: { name: "deleted soon", last4: doomed.key.slice(-4) } });
    expect(byId.has("stranger")).toBe(false);
    // Nor does the stranger's own log hold a call to a store that is not its team's.
    expect((await stranger.browser.client.requests.list.query({ store_id: stranger.store.id })).map((row) => row.request_id)).not.toContain("stranger");

    await owner.browser.client.stores.update.mutate({ id: owner.store.id, paused: true });
    expect((await push(owner.key, "paused")).status).toBe(404);
    await server.requestLog.flush();
    expect((await owner.browser.client.requests.list.query({ store_id: owner.store.id, request_id: "paused" }))[0]).toMatchObject({ status: 404, error: "Store not found or paused" });
  });

  it("a member changes country, delay and pause; the request log shows why a push was refused, by request id", async () => {
    const owner = await signedInTenant();
    const updated = await owner.browser.client.stores.update.mutate({ id: owner.store.id, country: "de", recovery_delay_seconds: 0 });
    expect(updated).toMatchObject({ id: owner.store.id, country: "DE", recovery_delay_seconds: 0, paused: false });

    const refused = await server.request("POST", `/api/v1/stores/${owner.store.id}/orders`, {
      key: owner.key,
      body: { external_id: "o-1" },
      headers: { "X-Request-Id": "shop-req-422" },
    });
    expect(refused.status).toBe(422);
    await server.request("POST", `/api/v1/stores/${owner.store.id}/customers`, { key: owner.key, body: { phone: "030 1234567" } });
    await server.requestLog.flush();
    const [entry] = await owner.browser.client.requests.list.query({ store_id: owner.store.id, request_id: "shop-req-422" });
    expect(entry).toMatchObject({ method: "POST", route: "/api/v1/stores/{store_id}/orders", status: 422, error: "Invalid request body", request_id: "shop-req-422", key: { name: "key", last4: owner.key.slice(-4) } });
    expect((await owner.browser.client.requests.list.query({ store_id: owner.store.id, status: "2xx" })).map((row) => row.status)).toEqual([201]);
    expect(JSON.stringify(await server.db.selectFrom("request_log").selectAll().execute())).not.toContain("1234567");

    const activity = await owner.browser.client.activity.list.query({ store_id: owner.store.id, flow: "contact_sync" });
    expect(activity.runs.map((run) => run.flow)).toEqual(["contact_sync"]);
    await owner.browser.client.stores.update.mutate({ id: owner.store.id, paused: true });
    expect((await server.request("POST", `/api/v1/stores/${owner.store.id}/customers`, { key: owner.key, body: { phone: "+14155552671" } })).status).toBe(404);
  });

  it("the live view's stream ends with its session: at sign-out, and when its member is removed", async () => {
    const owner = await signedInTenant();
    const open = (browser: typeof owner.browser) => fetch(`${server.url}/console/live/${owner.store.id}`, { headers: { Cookie: browser.cookieHeader() } });
    // Signed out: the open stream says why and ends; the browser's reconnection is refused.
    const signedIn = await open(owner.browser);
    expect(signedIn.status).toBe(200);
    const ended = readToEnd(signedIn);
    await owner.browser.client.session.signOut.mutate();
    expect(await ended).toContain('event: end\ndata: {"reason":"session_ended"}');
    expect((await fetch(`${server.url}/console/live/${owner.store.id}`)).status).toBe(401);

    // A second member watching the store, removed by the first: the stream ends too.
    const first = await signedInTenant();
    const email = uniqueEmail("watcher");
    const invitation = await first.browser.client.team.invite.mutate({ email });
    const watcher = consoleBrowser(server);
    await joinByInvitation(server, watcher, String(invitation.url).split("/invite/")[1] ?? "");
    const watching = await fetch(`${server.url}/console/live/${first.store.id}`, { headers: { Cookie: watcher.cookieHeader() } });
    expect(watching.status).toBe(200);
    const removedEnd = readToEnd(watching);
    const member = (await first.browser.client.team.members.query()).members.find((row) => row.email === email);
    await first.browser.client.team.remove.mutate({ member_id: member?.id ?? 0 });
    expect(await removedEnd).toContain('"reason":"session_ended"');
    expect((await fetch(`${server.url}/console/live/${first.store.id}`, { headers: { Cookie: watcher.cookieHeader() } })).status).toBe(401);
  });
});

describe("the live view's stream and an expired session", () => {
  it("ends when its session expires, idle, though the stream itself stays open", async () => {
    const short = await startTestServer({ accounts: { sessionIdleSeconds: 2 } });
    try {
      const tenant = await short.createTenant();
      const { token } = await invite(short, tenant.team.id, uniqueEmail("idle"));
      const browser = consoleBrowser(short);
      await joinByInvitation(short, browser, token);
      const stream = await fetch(`${short.url}/console/live/${tenant.store.id}`, { headers: { Cookie: browser.cookieHeader() } });
      expect(stream.status).toBe(200);
      expect(await readToEnd(stream)).toContain('event: end\ndata: {"reason":"session_ended"}');
      expect((await fetch(`${short.url}/console/live/${tenant.store.id}`, { headers: { Cookie: browser.cookieHeader() } })).status).toBe(401);
    } finally {
      await short.close();
    }
  });
});
