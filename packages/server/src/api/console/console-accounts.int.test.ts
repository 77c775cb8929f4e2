import { sql } from "kysely";
import http from "node:http";
import { describe, expect, it } from "vitest";
import { consoleBrowser, failure, invite, PASSWORD, server, signedInTenant, uniqueEmail, withConsoleServer, expectMail, joinByInvitation } from "../../../test/console.js";
import { ADMIN_TOKEN } from "../../../test/helpers.js";

withConsoleServer();

describe("invitations", () => {
  it("let a person choose a password, prove the e-mail by the link mailed to it, sign them in with a safe cookie, and work once", async () => {
    const tenant = await server.createTenant();
    const email = uniqueEmail("ada");
    const { url, token } = await invite(server, tenant.team.id, email);
    expect(url).toMatch(new RegExp(`^${server.url}/invite/[\\w-]{43}$`));
    const browser = consoleBrowser(server);
    expect(await browser.client.invitation.get.query({ token })).toMatchObject({ email, team_name: tenant.team.name });
    expect(await browser.client.session.me.query()).toBeNull();

    // A password chosen: nothing made yet, no session; a link goes to the e-mail.
    expect(await browser.client.invitation.accept.mutate({ token, password: PASSWORD })).toEqual({ check_email: true });
    expect(browser.jar.size).toBe(0);
    expect(await server.db.selectFrom("accounts").select("id").where("email", "=", email).execute()).toEqual([]);
    const proof = await expectMail(server, email, /\/verify\/([A-Za-z0-9_-]+)/);
    expect(await browser.client.invitation.verify.mutate({ token: proof })).toEqual({ ok: true });
    const cookie = browser.setCookies.at(-1) ?? "";
    expect(cookie).toMatch(/^console_session=[\w-]{43};/);
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Lax/i);
    expect(cookie).toMatch(/Path=\//);
    expect(cookie).not.toMatch(/Secure/i);
    expect(await browser.client.session.me.query()).toEqual({ email, role: "owner", team: { id: tenant.team.id, name: tenant.team.name }, teams: [{ id: tenant.team.id, name: tenant.team.name }] });
    // Only the token's hash is stored.
    const sessionToken = browser.jar.get("console_session") ?? "";
    expect(JSON.stringify(await server.db.selectFrom("sessions").selectAll().execute())).not.toContain(sessionToken);

    expect(await failure(consoleBrowser(server).client.invitation.accept.mutate({ token, password: PASSWORD }))).toMatchObject({
      code: "NOT_FOUND",
      message: "This invitation link is invalid, already used or expired",
    });
    expect(await failure(consoleBrowser(server).client.invitation.verify.mutate({ token: proof }))).toMatchObject({ code: "NOT_FOUND" });
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
    const token = String(url).split("/invite/")[1] ?? "";
    // Choosing a password for an e-mail that has an account answers as for a new one, changes nothing, and tells
    // the account's owner by mail: the link's holder learns nothing about who has an account.
    const stranger = consoleBrowser(server);
    expect(await stranger.client.invitation.get.query({ token })).toMatchObject({ email: ada.email, team_name: other.team.name });
    const fresh = await other.browser.client.team.invite.mutate({ email: uniqueEmail("fresh") });
    const freshAnswer = await consoleBrowser(server).client.invitation.accept.mutate({ token: String(fresh.url).split("/invite/")[1] ?? "", password: "another long password" });
    const mailsBefore = server.mails.length;
    expect(await stranger.client.invitation.accept.mutate({ token, password: "another long password" })).toEqual(freshAnswer);
    expect(stranger.jar.size).toBe(0);
    expect(await expectMail(server, ada.email, /(your account already exists)/i, mailsBefore)).toBeTruthy();
    expect(server.mails.slice(mailsBefore).some((mail) => /\/verify\//.test(mail.text))).toBe(false);
    expect(await failure(consoleBrowser(server).client.session.signIn.mutate({ email: ada.email, password: "another long password" }))).toMatchObject({ code: "UNAUTHORIZED" });
    // Another signed-in account cannot take it; the link stays good for Ada.
    expect(await failure(other.browser.client.invitation.join.mutate({ token }))).toMatchObject({ code: "FORBIDDEN", message: "This invitation is for another e-mail; sign in with that e-mail to accept it" });

    const browser = consoleBrowser(server);
    await browser.client.session.signIn.mutate({ email: ada.email, password: PASSWORD });
    expect(await browser.client.invitation.join.mutate({ token })).toEqual({ id: other.team.id, name: other.team.name });
    expect(await browser.client.session.me.query()).toEqual({
      email: ada.email,
      // Invited by a member of the team: a member there (an owner in her own team).
      role: "member",
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
    const token = (link: string | null) => String(link).split("/invite/")[1] ?? "";
    expect(await failure(consoleBrowser(server).client.invitation.get.query({ token: token(url) }))).toMatchObject({ message: "This invitation link is invalid, already used or expired" });
    expect(await consoleBrowser(server).client.invitation.get.query({ token: token(renewed.url) })).toMatchObject({ email });

    await owner.browser.client.team.revokeInvitation.mutate({ id });
    expect(await owner.browser.client.team.invitations.query()).toEqual([]);
    const stranger = consoleBrowser(server);
    expect(await failure(stranger.client.invitation.accept.mutate({ token: token(renewed.url), password: PASSWORD }))).toMatchObject({ code: "NOT_FOUND" });
  });
});

describe("the team page", () => {
  it("invites with a link, lists members, and never removes the last one", async () => {
    const owner = await signedInTenant();
    const second = uniqueEmail("second");
    const invitation = await owner.browser.client.team.invite.mutate({ email: second });
    const token = String(invitation.url).split("/invite/")[1] ?? "";
    await joinByInvitation(server, consoleBrowser(server), token);
    const { me, members } = await owner.browser.client.team.members.query();
    expect(members.map((member) => member.email)).toEqual([owner.email, second]);
    const other = members.find((member) => member.email === second);
    await owner.browser.client.team.remove.mutate({ member_id: other?.id ?? 0 });
    expect(await failure(owner.browser.client.team.remove.mutate({ member_id: me }))).toMatchObject({ code: "CONFLICT", message: "A team keeps at least one member" });
    // Removed from their only team, the account is gone: the old password no longer signs in, and a new invitation starts afresh.
    expect(await failure(consoleBrowser(server).client.session.signIn.mutate({ email: second, password: PASSWORD }))).toMatchObject({ code: "UNAUTHORIZED" });
    const again = await owner.browser.client.team.invite.mutate({ email: second });
    await joinByInvitation(server, consoleBrowser(server), String(again.url).split("/invite/")[1] ?? "", "a brand new password");
    expect((await owner.browser.client.team.members.query()).members.map((member) => member.email)).toEqual([owner.email, second]);
  });
});
