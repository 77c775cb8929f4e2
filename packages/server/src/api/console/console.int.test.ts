import http from "node:http";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { consoleBrowser, failure, invite } from "../../../test/console.js";
import { ADMIN_TOKEN, startTestServer, type TestServer } from "../../../test/helpers.js";

let server: TestServer;
let consoleDir: string;
const PASSWORD = "a long enough password";

beforeAll(async () => {
  consoleDir = fs.mkdtempSync(path.join(os.tmpdir(), "console-"));
  fs.mkdirSync(path.join(consoleDir, "assets"));
  fs.writeFileSync(path.join(consoleDir, "index.html"), "<!doctype html><title>Console</title><div id=root></div>");
  fs.writeFileSync(path.join(consoleDir, "assets", "app-1a2b3c.js"), "console.log('app');\n".repeat(200));
  server = await startTestServer({ consoleDir, signInLimits: { perEmail: 3, perAddress: 1000, windowSeconds: 60 } });
});
afterAll(async () => {
  await server?.close();
  fs.rmSync(consoleDir, { recursive: true, force: true });
});

let seq = 0;
const uniqueEmail = (name: string) => `${name}.${Date.now()}.${++seq}@example.com`;

/** A tenant with a signed-in member. */
async function signedInTenant() {
  const tenant = await server.createTenant();
  const email = uniqueEmail("owner");
  const { token } = await invite(server, tenant.team.id, email);
  const browser = consoleBrowser(server);
  await browser.client.invitation.accept.mutate({ token, password: PASSWORD });
  return { ...tenant, email, browser };
}

describe("invitations", () => {
  it("let a person choose a password, sign them in with a safe cookie, and work once", async () => {
    const tenant = await server.createTenant();
    const email = uniqueEmail("ada");
    const { url, token } = await invite(server, tenant.team.id, email);
    expect(url).toMatch(new RegExp(`^${server.url}/invite/[\\w-]{43}$`));
    const browser = consoleBrowser(server);
    expect(await browser.client.invitation.get.query({ token })).toMatchObject({ email, team_name: tenant.team.name });
    expect(await browser.client.session.me.query()).toBeNull();

    await browser.client.invitation.accept.mutate({ token, password: PASSWORD });
    const cookie = browser.setCookies.at(-1) ?? "";
    expect(cookie).toMatch(/^console_session=[\w-]{43};/);
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Lax/i);
    expect(cookie).toMatch(/Path=\//);
    expect(cookie).not.toMatch(/Secure/i);
    expect(await browser.client.session.me.query()).toEqual({ email, team: { id: tenant.team.id, name: tenant.team.name }, teams: [{ id: tenant.team.id, name: tenant.team.name }] });
    // Only the token's hash is stored.
    const sessionToken = browser.jar.get("console_session") ?? "";
    expect(JSON.stringify(await server.db.selectFrom("sessions").selectAll().execute())).not.toContain(sessionToken);

    expect(await failure(consoleBrowser(server).client.invitation.accept.mutate({ token, password: PASSWORD }))).toMatchObject({
      code: "NOT_FOUND",
      message: "This invitation link is invalid, already used or expired",
    });
  });

  it("expire after their time, and refuse a short password", async () => {
    const tenant = await server.createTenant();
    const { token } = await invite(server, tenant.team.id, uniqueEmail("late"));
    expect(await failure(consoleBrowser(server).client.invitation.accept.mutate({ token, password: "short" }))).toMatchObject({ code: "BAD_REQUEST" });
    await server.db.updateTable("invitations").set({ expires_at: sql<Date>`now() - interval '1 second'` }).where("email", "like", "late.%").execute();
    expect(await failure(consoleBrowser(server).client.invitation.get.query({ token }))).toMatchObject({ code: "NOT_FOUND" });
    expect(await failure(consoleBrowser(server).client.invitation.accept.mutate({ token, password: PASSWORD }))).toMatchObject({ code: "NOT_FOUND" });
  });

  it("answer the same whether the e-mail has an account in another team or none, and refuse only this team's own members", async () => {
    const elsewhere = await signedInTenant();
    const inviter = await signedInTenant();
    const withAccount = await inviter.browser.client.team.invite.mutate({ email: elsewhere.email });
    const withoutAccount = await inviter.browser.client.team.invite.mutate({ email: uniqueEmail("nobody") });
    const shape = (answer: Record<string, unknown>) => Object.fromEntries(Object.entries(answer).map(([key, value]) => [key, key === "email" ? "" : typeof value]));
    expect(shape(withAccount)).toEqual(shape(withoutAccount));
    expect(withAccount).toMatchObject({ team_id: inviter.team.id, email: elsewhere.email });
    // The operator API answers alike too.
    const viaAdmin = await server.request("POST", "/admin/v1/invitations", { key: ADMIN_TOKEN, body: { team_id: inviter.team.id, email: elsewhere.email.toUpperCase() } });
    expect(viaAdmin.status).toBe(201);
    // Only a member of this very team, whom its page lists anyway, is refused.
    expect((await server.request("POST", "/admin/v1/invitations", { key: ADMIN_TOKEN, body: { team_id: inviter.team.id, email: inviter.email.toUpperCase() } })).body).toEqual({
      error: "This e-mail is already a member of the team",
      code: "already_member",
      details: [{ path: "email", message: "is already a member of the team" }],
    });
    expect(await failure(inviter.browser.client.team.invite.mutate({ email: inviter.email }))).toMatchObject({ code: "CONFLICT", message: "This e-mail is already a member of the team" });
    expect((await server.request("POST", "/admin/v1/invitations", { key: ADMIN_TOKEN, body: { team_id: 99_999_999, email: uniqueEmail("x") } })).status).toBe(404);
  });

  it("are accepted by an existing account after it signs in; it then switches between its teams", async () => {
    const ada = await signedInTenant();
    const other = await signedInTenant();
    const { url } = await other.browser.client.team.invite.mutate({ email: ada.email });
    const token = url.split("/invite/")[1] ?? "";
    // Choosing a password for an e-mail that has an account is refused, and changes nothing.
    const stranger = consoleBrowser(server);
    expect(await stranger.client.invitation.get.query({ token })).toMatchObject({ email: ada.email, team_name: other.team.name });
    expect(await failure(stranger.client.invitation.accept.mutate({ token, password: "another long password" }))).toMatchObject({ code: "CONFLICT", message: "This e-mail already has an account" });
    // Another signed-in account cannot take it; the link stays good for Ada.
    expect(await failure(other.browser.client.invitation.join.mutate({ token }))).toMatchObject({ code: "FORBIDDEN", message: "This invitation is for another e-mail; sign in with that e-mail to accept it" });

    const browser = consoleBrowser(server);
    await browser.client.session.signIn.mutate({ email: ada.email, password: PASSWORD });
    expect(await browser.client.invitation.join.mutate({ token })).toEqual({ id: other.team.id, name: other.team.name });
    expect(await browser.client.session.me.query()).toEqual({
      email: ada.email,
      team: { id: other.team.id, name: other.team.name },
      teams: [
        { id: ada.team.id, name: ada.team.name },
        { id: other.team.id, name: other.team.name },
      ],
    });
    expect(await failure(browser.client.invitation.join.mutate({ token }))).toMatchObject({ code: "NOT_FOUND" });
    // Each team's data as its member; back to the first team, and never to a team she is not in.
    expect((await browser.client.stores.list.query()).map((store) => store.id)).toEqual([other.store.id]);
    await browser.client.session.switchTeam.mutate({ team_id: ada.team.id });
    expect((await browser.client.stores.list.query()).map((store) => store.id)).toEqual([ada.store.id]);
    const third = await server.createTenant();
    expect(await failure(browser.client.session.switchTeam.mutate({ team_id: third.team.id }))).toMatchObject({ code: "NOT_FOUND", message: "Team not found" });
    expect((await other.browser.client.team.members.query()).members.map((member) => member.email)).toEqual([other.email, ada.email]);
    expect((await other.browser.client.team.audit.query({})).map((entry) => `${entry.action} ${entry.actor}`)).toContain(`member.joined ${ada.email}`);

    // Removed from one team, she still signs in to the other; her session there is untouched.
    const adaInOther = (await other.browser.client.team.members.query()).members.find((member) => member.email === ada.email);
    await other.browser.client.team.remove.mutate({ member_id: adaInOther?.id ?? 0 });
    expect((await browser.client.session.me.query())?.teams).toEqual([{ id: ada.team.id, name: ada.team.name }]);
    const again = consoleBrowser(server);
    await again.client.session.signIn.mutate({ email: ada.email, password: PASSWORD });
    expect((await again.client.session.me.query())?.team.id).toBe(ada.team.id);
  });
});

describe("sign-in", () => {
  it("answers a wrong password and an unknown e-mail alike, and throttles failures per e-mail", async () => {
    const owner = await signedInTenant();
    const browser = consoleBrowser(server);
    const wrongPassword = await failure(browser.client.session.signIn.mutate({ email: owner.email, password: "not the password" }));
    const unknownEmail = await failure(browser.client.session.signIn.mutate({ email: uniqueEmail("nobody"), password: PASSWORD }));
    expect(wrongPassword).toEqual({ code: "UNAUTHORIZED", message: "Wrong e-mail or password", httpStatus: 401, errorCode: "sign_in_failed", details: null });
    expect(unknownEmail).toEqual(wrongPassword);

    await failure(browser.client.session.signIn.mutate({ email: owner.email, password: "still wrong" }));
    await failure(browser.client.session.signIn.mutate({ email: owner.email.toUpperCase(), password: "wrong again" }));
    // Three failures spent this e-mail's budget: even the right password waits now.
    expect(await failure(browser.client.session.signIn.mutate({ email: owner.email, password: PASSWORD }))).toMatchObject({
      code: "TOO_MANY_REQUESTS",
      message: "Too many sign-in attempts; try again later",
    });
    // The browser is told when to try again.
    const raw = await fetch(`${server.url}/console/trpc/session.signIn`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Origin: server.url },
      body: JSON.stringify({ email: owner.email, password: PASSWORD }),
    });
    expect(raw.status).toBe(429);
    expect(Number(raw.headers.get("retry-after"))).toBeGreaterThan(0);
  });

  it("cannot be used by a stranger to lock a member out: failures from another address spend that address's budget", async () => {
    const owner = await signedInTenant();
    /** A sign-in from another address of this machine (127.0.0.2), as a stranger elsewhere would send it. */
    const fromElsewhere = (password: string) =>
      new Promise<number>((resolve, reject) => {
        const body = JSON.stringify({ email: owner.email, password });
        const { port } = new URL(server.url);
        const req = http.request(
          { host: "127.0.0.1", port: Number(port), localAddress: "127.0.0.2", method: "POST", path: "/console/trpc/session.signIn", headers: { "Content-Type": "application/json", Origin: server.url, "Content-Length": Buffer.byteLength(body) } },
          (res) => {
            res.resume();
            res.on("end", () => resolve(res.statusCode ?? 0));
          },
        );
        req.on("error", reject);
        req.end(body);
      });
    // The stranger spends its budget on the member's e-mail and is throttled, even with the right password.
    const tries = [];
    for (let i = 0; i < 4; i++) tries.push(await fromElsewhere("a wrong guess"));
    expect(tries).toEqual([401, 401, 401, 429]);
    expect(await fromElsewhere(PASSWORD)).toBe(429);
    // The member, from their own address, signs in at once.
    const member = consoleBrowser(server);
    expect(await member.client.session.signIn.mutate({ email: owner.email, password: PASSWORD })).toEqual({ ok: true });
  });

  it("with the right password opens a session; sign-out deletes it", async () => {
    const owner = await signedInTenant();
    const browser = consoleBrowser(server);
    await browser.client.session.signIn.mutate({ email: ` ${owner.email.toUpperCase()} `, password: PASSWORD });
    const stolen = browser.jar.get("console_session") ?? "";
    expect((await browser.client.session.me.query())?.email).toBe(owner.email);
    await browser.client.session.signOut.mutate();
    expect(browser.jar.has("console_session")).toBe(false);
    expect(await browser.client.session.me.query()).toBeNull();
    // The old cookie is worthless: its session row is gone.
    const replay = consoleBrowser(server);
    replay.jar.set("console_session", stolen);
    expect(await failure(replay.client.keys.list.query())).toMatchObject({ code: "UNAUTHORIZED", message: "Sign in first" });
  });
});

describe("sessions", () => {
  it("end when idle too long, and at their absolute expiry", async () => {
    const idle = await signedInTenant();
    await idle.browser.client.keys.list.query();
    await server.db.updateTable("sessions").set({ last_seen_at: sql<Date>`now() - interval '2 hours'` }).where("member_id", "in", (eb) => eb.selectFrom("members as m").innerJoin("accounts as a", "a.id", "m.account_id").select("m.id").where("a.email", "=", idle.email)).execute();
    expect(await failure(idle.browser.client.keys.list.query())).toMatchObject({ code: "UNAUTHORIZED" });

    const old = await signedInTenant();
    await server.db.updateTable("sessions").set({ expires_at: sql<Date>`now() - interval '1 second'` }).where("member_id", "in", (eb) => eb.selectFrom("members as m").innerJoin("accounts as a", "a.id", "m.account_id").select("m.id").where("a.email", "=", old.email)).execute();
    expect(await old.browser.client.session.me.query()).toBeNull();
  });

  it("refuse a mutation started by another site's page", async () => {
    const owner = await signedInTenant();
    const evil = consoleBrowser(server, "https://evil.example");
    for (const [name, value] of owner.browser.jar) evil.jar.set(name, value);
    expect(await failure(evil.client.keys.create.mutate({ name: "stolen" }))).toMatchObject({ code: "FORBIDDEN", message: "Cross-site request refused" });
    expect(await owner.browser.client.keys.list.query()).toHaveLength(1);
  });
});

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
    await consoleBrowser(server).client.invitation.accept.mutate({ token, password: PASSWORD });
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
    expect(log.find((entry) => entry.action === "store.changed")?.target).toBe(`store ${store.id} (Outlet 2): recovery delay 600 s`);
    expect(log.find((entry) => entry.action === "member.removed")?.target).toBe(joining);
    // A page after the newest five.
    const older = await owner.browser.client.team.audit.query({ before: log[4]?.id });
    expect(older.map((entry) => entry.action)).toEqual(log.slice(5).map((entry) => entry.action));
    expect(JSON.stringify(await stranger.browser.client.team.audit.query({}))).not.toContain(owner.email);
  });
});

describe("pending invitations", () => {
  it("are listed, renewed (the old link refused) and revoked (the link refused); another team's answer as unknown ones", async () => {
    const owner = await signedInTenant();
    const other = await signedInTenant();
    const email = uniqueEmail("pending");
    const { url } = await owner.browser.client.team.invite.mutate({ email });
    const [pending] = await owner.browser.client.team.invitations.query();
    expect(pending).toMatchObject({ email, invited_by: owner.email, expires_at: expect.any(String) });
    const id = pending?.id ?? 0;
    expect(await other.browser.client.team.invitations.query()).toEqual([]);
    expect(await failure(other.browser.client.team.renewInvitation.mutate({ id }))).toMatchObject({ code: "NOT_FOUND" });
    expect(await failure(other.browser.client.team.revokeInvitation.mutate({ id }))).toMatchObject({ code: "NOT_FOUND" });

    const renewed = await owner.browser.client.team.renewInvitation.mutate({ id });
    const token = (link: string) => link.split("/invite/")[1] ?? "";
    expect(await failure(consoleBrowser(server).client.invitation.get.query({ token: token(url) }))).toMatchObject({ message: "This invitation link is invalid, already used or expired" });
    expect(await consoleBrowser(server).client.invitation.get.query({ token: token(renewed.url) })).toMatchObject({ email });

    await owner.browser.client.team.revokeInvitation.mutate({ id });
    expect(await owner.browser.client.team.invitations.query()).toEqual([]);
    const stranger = consoleBrowser(server);
    expect(await failure(stranger.client.invitation.accept.mutate({ token: token(renewed.url), password: PASSWORD }))).toMatchObject({ code: "NOT_FOUND" });
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
});

describe("the team page", () => {
  it("invites with a link, lists members, and never removes the last one", async () => {
    const owner = await signedInTenant();
    const second = uniqueEmail("second");
    const invitation = await owner.browser.client.team.invite.mutate({ email: second });
    const token = invitation.url.split("/invite/")[1] ?? "";
    await consoleBrowser(server).client.invitation.accept.mutate({ token, password: PASSWORD });
    const { me, members } = await owner.browser.client.team.members.query();
    expect(members.map((member) => member.email)).toEqual([owner.email, second]);
    const other = members.find((member) => member.email === second);
    await owner.browser.client.team.remove.mutate({ member_id: other?.id ?? 0 });
    expect(await failure(owner.browser.client.team.remove.mutate({ member_id: me }))).toMatchObject({ code: "CONFLICT", message: "A team keeps at least one member" });
    // Removed from their only team, the account is gone: the old password no longer signs in, and a new invitation starts afresh.
    expect(await failure(consoleBrowser(server).client.session.signIn.mutate({ email: second, password: PASSWORD }))).toMatchObject({ code: "UNAUTHORIZED" });
    const again = await owner.browser.client.team.invite.mutate({ email: second });
    await consoleBrowser(server).client.invitation.accept.mutate({ token: again.url.split("/invite/")[1] ?? "", password: "a brand new password" });
    expect((await owner.browser.client.team.members.query()).members.map((member) => member.email)).toEqual([owner.email, second]);
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
