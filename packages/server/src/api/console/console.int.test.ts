import { describe, expect, it } from "vitest";
import { consoleBrowser, failure, invite, joinByInvitation, server, signedInTenant, uniqueEmail, withConsoleServer } from "../../../test/console.js";

withConsoleServer();

describe("API keys in the console", () => {
  it("created with the value once, listed without it, used over REST, deleted at once", async () => {
    const owner = await signedInTenant();
    const created = await owner.browser.client.keys.create.mutate({ name: "backend", store_id: owner.store.id });
    expect(created.key).toMatch(/^[A-Za-z0-9]{24}$/);
    const push = () => server.request("POST", `/api/v1/stores/${owner.store.id}/customers`, { key: created.key, body: { external_id: "console-1", phone: "+14155552671" } });
    expect((await push()).status).toBe(201);
    await server.requestLog.flush();

    const listed = await owner.browser.client.keys.list.query();
    const mine = listed.find((key) => key.id === created.id);
    expect(mine).toMatchObject({ name: "backend", last4: created.key.slice(-4), store: { id: owner.store.id, name: "Shop" }, created_by: owner.email });
    expect(mine?.last_used_at).toMatch(/^\d{4}-\d\d-\d\dT.*[+-]\d\d:\d\d$/);
    expect(JSON.stringify(listed)).not.toContain(created.key);

    await owner.browser.client.keys.delete.mutate({ id: created.id });
    expect((await push()).status).toBe(401);
  });

  it("of another team can be neither seen nor deleted, nor its stores read or changed", async () => {
    const a = await signedInTenant();
    const b = await signedInTenant();
    expect((await b.browser.client.keys.list.query()).map((key) => key.id)).not.toContain(a.keyId);
    expect(await failure(b.browser.client.keys.delete.mutate({ id: a.keyId }))).toMatchObject({ code: "NOT_FOUND", message: "API key not found" });
    expect((await server.request("POST", `/api/v1/stores/${a.store.id}/customers`, { key: a.key, body: { phone: "+14155552671" } })).status).toBe(201);
    expect((await b.browser.client.stores.list.query()).map((store) => store.id)).toEqual([b.store.id]);
    expect(await failure(b.browser.client.stores.update.mutate({ id: a.store.id, paused: true }))).toMatchObject({ code: "NOT_FOUND" });
    expect(await failure(b.browser.client.activity.list.query({ store_id: a.store.id }))).toMatchObject({ code: "NOT_FOUND" });
    expect(await failure(b.browser.client.requests.list.query({ store_id: a.store.id }))).toMatchObject({ code: "NOT_FOUND" });
    // An import of A's, refused lines and all: B learns nothing of it, as of an unknown store or import.
    const upload = await fetch(`${server.url}/api/v1/stores/${a.store.id}/imports?kind=customers`, {
      method: "POST",
      headers: { Authorization: `Bearer ${a.key}`, "Content-Type": "application/x-ndjson" },
      body: '{"external_id":"c-1","phone":"12"}\n{"external_id":"c-2","phone":"+14155552671"}\n',
    });
    const { id: importId } = (await upload.json()) as { id: number };
    expect((await a.browser.client.imports.list.query({ store_id: a.store.id })).map((row) => row.id)).toEqual([importId]);
    expect(await failure(b.browser.client.imports.list.query({ store_id: a.store.id }))).toMatchObject({ code: "NOT_FOUND" });
    expect(await failure(b.browser.client.imports.errors.query({ store_id: a.store.id, import_id: importId }))).toMatchObject({ code: "NOT_FOUND" });
    expect(await failure(b.browser.client.imports.errors.query({ store_id: b.store.id, import_id: importId }))).toMatchObject({ code: "NOT_FOUND", message: "Import not found" });
  });
});

describe("keys rolled and renamed", () => {
  it("a rolled key works through its overlap and is refused after it; the new key works; another team's keys answer as unknown ones", async () => {
    const owner = await signedInTenant();
    const stranger = await signedInTenant();
    const push = (key: string) => server.request("POST", `/api/v1/stores/${owner.store.id}/customers`, { key, body: { phone: "+14155552671" } });
    expect(await failure(stranger.browser.client.keys.roll.mutate({ id: owner.keyId, overlap_seconds: 0 }))).toMatchObject({ code: "NOT_FOUND", message: "API key not found" });
    expect(await failure(stranger.browser.client.keys.rename.mutate({ id: owner.keyId, name: "mine" }))).toMatchObject({ code: "NOT_FOUND" });

    const rolled = await owner.browser.client.keys.roll.mutate({ id: owner.keyId, overlap_seconds: 2 });
    expect(rolled.key).toMatchObject({ name: "key", store_id: null });
    expect(rolled.key.key).not.toBe(owner.key);
    // Both work during the overlap, and the list says when the old one ends.
    expect((await push(owner.key)).status).toBeLessThan(300);
    expect((await push(rolled.key.key)).status).toBeLessThan(300);
    const listed = await owner.browser.client.keys.list.query();
    expect(listed.find((key) => key.id === owner.keyId)?.expires_at).toBe(rolled.previous_expires_at);
    expect(listed.find((key) => key.id === rolled.key.id)?.expires_at).toBeNull();
    // Then the old one is refused, on the cached path too, and leaves the list; the new one goes on.
    await expect.poll(async () => (await push(owner.key)).status, { interval: 200 }).toBe(401);
    expect((await push(rolled.key.key)).status).toBeLessThan(300);
    expect((await owner.browser.client.keys.list.query()).map((key) => key.id)).toEqual([rolled.key.id]);

    expect(await owner.browser.client.keys.rename.mutate({ id: rolled.key.id, name: "storefront" })).toEqual({ id: rolled.key.id, name: "storefront" });
    const now = await owner.browser.client.keys.roll.mutate({ id: rolled.key.id, overlap_seconds: 0 });
    expect(now.key.name).toBe("storefront");
    expect((await push(rolled.key.key)).status).toBe(401);
    expect(await failure(owner.browser.client.keys.roll.mutate({ id: rolled.key.id, overlap_seconds: 0 }))).toMatchObject({ code: "NOT_FOUND" });
  });
});

describe("the audit log", () => {
  it("has an entry per change to keys, stores and members, by whom, newest first; another team sees none of them", async () => {
    const owner = await signedInTenant();
    const stranger = await signedInTenant();
    const key = await owner.browser.client.keys.create.mutate({ name: "backend" });
    await owner.browser.client.keys.rename.mutate({ id: key.id, name: "storefront" });
    const rolled = await owner.browser.client.keys.roll.mutate({ id: key.id, overlap_seconds: 0 });
    await owner.browser.client.keys.delete.mutate({ id: rolled.key.id });
    const store = await owner.browser.client.stores.create.mutate({ name: "Outlet", country: "US" });
    await owner.browser.client.stores.update.mutate({ id: store.id, paused: true });
    await owner.browser.client.stores.update.mutate({ id: store.id, name: "Outlet 2", recovery_delay_seconds: 600 });
    const invited = uniqueEmail("audited");
    await owner.browser.client.team.invite.mutate({ email: invited });
    const [pending] = await owner.browser.client.team.invitations.query();
    await owner.browser.client.team.revokeInvitation.mutate({ id: pending?.id ?? 0 });
    const joining = uniqueEmail("joiner");
    const { token } = await invite(server, owner.team.id, joining);
    await joinByInvitation(server, consoleBrowser(server), token);
    const joined = (await owner.browser.client.team.members.query()).members.find((member) => member.email === joining);
    await owner.browser.client.team.remove.mutate({ member_id: joined?.id ?? 0 });

    const log = await owner.browser.client.team.audit.query({});
    expect(log.map((entry) => [entry.actor, entry.action])).toEqual([
      [owner.email, "member.removed"],
      [joining, "member.joined"],
      ["operator", "member.invited"],
      [owner.email, "invitation.revoked"],
      [owner.email, "member.invited"],
      [owner.email, "store.changed"],
      [owner.email, "store.renamed"],
      [owner.email, "store.paused"],
      [owner.email, "store.created"],
      [owner.email, "key.deleted"],
      [owner.email, "key.rolled"],
      [owner.email, "key.renamed"],
      [owner.email, "key.created"],
      // The owner's own arrival, when the test's team was set up.
      [owner.email, "member.joined"],
      ["operator", "member.invited"],
    ]);
    expect(log.find((entry) => entry.action === "key.created")?.target).toBe(`backend (…${key.last4})`);
    // Keys named by name and last four characters, never by internal id.
    expect(log.find((entry) => entry.action === "key.renamed")?.target).toBe(`backend (…${key.last4}) to storefront`);
    expect(log.find((entry) => entry.action === "key.rolled")?.target).toMatch(new RegExp(`^storefront: …${rolled.key.last4} in place of …${key.last4}, which works until `));
    expect(log.find((entry) => entry.action === "store.changed")?.target).toBe(`store ${store.id} (Outlet 2): recovery delay 600 s`);
    expect(log.find((entry) => entry.action === "member.removed")?.target).toBe(joining);
    // A page after the newest five.
    const older = await owner.browser.client.team.audit.query({ before: log[4]?.id });
    expect(older.map((entry) => entry.action)).toEqual(log.slice(5).map((entry) => entry.action));
    expect(JSON.stringify(await stranger.browser.client.team.audit.query({}))).not.toContain(owner.email);
  });
});

describe("stores from the console", () => {
  it("are created in the member's team and renamed; another team's store answers as an unknown one", async () => {
    const owner = await signedInTenant();
    const other = await signedInTenant();
    const created = await owner.browser.client.stores.create.mutate({ name: "Second shop", country: "GB" });
    expect(created).toMatchObject({ name: "Second shop", country: "GB", team_id: owner.team.id, paused: false });
    expect((await owner.browser.client.stores.list.query()).map((store) => store.name)).toEqual(["Shop", "Second shop"]);
    // The team's key writes to it at once.
    const push = await server.request("POST", `/api/v1/stores/${created.id}/customers`, { key: owner.key, body: { phone: "020 7946 0958" } });
    expect(push.status).toBe(201);
    const stored = await server.request("GET", `/api/v1/stores/${created.id}/customers/${encodeURIComponent("+442079460958")}`, { key: owner.key });
    expect(stored.body).toMatchObject({ phone: "+442079460958" });
    expect(await owner.browser.client.stores.update.mutate({ id: created.id, name: "Renamed shop" })).toMatchObject({ name: "Renamed shop" });
    expect(await failure(other.browser.client.stores.update.mutate({ id: created.id, name: "Taken" }))).toMatchObject({ code: "NOT_FOUND" });
    // A refused field is named, so the form shows its problem beside it.
    const badCountry = await failure(owner.browser.client.stores.create.mutate({ name: "Bad", country: "XX" }));
    expect(badCountry).toMatchObject({ httpStatus: 422, errorCode: "validation_failed", details: [{ path: "country" }] });
    expect(badCountry.details?.[0]?.message).toMatch(/country/i);
    const noName = await failure(owner.browser.client.stores.create.mutate({ name: "", country: null }));
    expect(noName).toMatchObject({ httpStatus: 400, errorCode: "validation_failed", details: [{ path: "name" }] });
    expect(noName.message).toMatch(/^name /);
  });
});

describe("the console's pages", () => {
  it("serve index.html on client routes only, cache hashed assets, and leave the API's 404s as JSON", async () => {
    for (const route of ["/", "/sign-in", "/invite/abc", "/settings/api-keys", "/stores", "/stores/3/activity", "/team", "/audit"]) {
      const page = await server.request("GET", route);
      expect(page.status, route).toBe(200);
      expect(page.headers.get("content-type"), route).toMatch(/text\/html/);
      expect(page.headers.get("cache-control"), route).toBe("no-cache");
    }
    const asset = await server.request("GET", "/assets/app-1a2b3c.js");
    expect(asset.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    // Sent compressed to a browser that takes it.
    const compressed = await fetch(`${server.url}/assets/app-1a2b3c.js`, { headers: { "Accept-Encoding": "gzip" } });
    expect(compressed.headers.get("content-encoding")).toBe("gzip");
    for (const route of ["/api/v1/unknown", "/admin/v1/nope", "/console/nope", "/healthz/x"]) {
      const res = await server.request("GET", route);
      expect(res.status, route).toBe(404);
      expect(res.body, route).toEqual({ error: "Not found", code: "not_found" });
    }
    expect((await server.request("GET", "/assets/missing.js")).status).toBe(404);
    // A browser asking for a page that does not exist gets the console's own page, with its 404.
    const unknown = await server.request("GET", "/no/such/page", { headers: { Accept: "text/html,application/xhtml+xml,*/*;q=0.8" } });
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get("content-type")).toMatch(/text\/html/);
    expect((await server.request("GET", "/api/v1/unknown", { headers: { Accept: "text/html" } })).body).toEqual({ error: "Not found", code: "not_found" });
    expect((await server.request("GET", "/docs")).text).toContain("swagger");
  });
});
