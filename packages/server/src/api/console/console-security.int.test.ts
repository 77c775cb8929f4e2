import { Secret, TOTP } from "otpauth";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { consoleBrowser, failure, invite, joinByInvitation, PASSWORD, readToEnd } from "../../../test/console.js";
import { startTestServer, type TestServer } from "../../../test/helpers.js";
import { startInbox, type ReceivedMail } from "../../../test/smtp.js";

/** The SMTP server started here, and the mails it received. */
let inbox: Awaited<ReturnType<typeof startInbox>>;
let mails: ReceivedMail[] = [];
let server: TestServer;
/** Every line the service logged while these tests ran. */
const logged: string[] = [];

beforeAll(async () => {
  inbox = await startInbox();
  mails = inbox.mails;
  const { default: pino } = await import("pino");
  server = await startTestServer({
    smtpUrl: inbox.url,
    signInLimits: { perEmail: 3, perAddress: 1000, windowSeconds: 60 },
    logger: pino({ level: "debug" }, { write: (line: string) => logged.push(line) }),
  });
});
afterAll(async () => {
  await server?.close();
  await inbox?.close();
});

let seq = 0;
const emailOf = (name: string) => `${name}.${Date.now()}.${++seq}@security.example`;

/** A person with an account in a new team (its owner), signed in from a browser of their own. */
async function owner(userAgent = "Browser A") {
  const tenant = await server.createTenant();
  const email = emailOf("owner");
  const { token } = await invite(server, tenant.team.id, email);
  const browser = consoleBrowser(server, server.url, userAgent);
  await joinByInvitation(server, browser, token);
  return { ...tenant, email, browser };
}

/** The same account signed in again, from another browser. */
async function signedInAgain(email: string, password = PASSWORD, userAgent = "Browser B") {
  const browser = consoleBrowser(server, server.url, userAgent);
  await browser.client.session.signIn.mutate({ email, password });
  return browser;
}

/** The invitation link mailed to this e-mail (the inviter never sees it), once it has arrived. */
async function mailedInvitation(to: string): Promise<string> {
  const tokenOf = () => mails.filter((mail) => mail.to === to).at(-1)?.text.match(/\/invite\/([A-Za-z0-9_-]+)/)?.[1];
  await expect.poll(tokenOf, { timeout: 10_000 }).toBeTruthy();
  return tokenOf() ?? "";
}

const linkIn = (to: string) => mails.filter((mail) => mail.to === to).at(-1)?.text.match(/\/reset\/([A-Za-z0-9_-]+)/)?.[1];

describe("password reset by e-mail", () => {
  it("mails a link that works once and ends every session of the account, its live view too; an unknown e-mail gets the same answer", async () => {
    const ada = await owner();
    const elsewhere = await signedInAgain(ada.email);
    const watching = await fetch(`${server.url}/console/live/${ada.store.id}`, { headers: { Cookie: elsewhere.cookieHeader() } });
    expect(watching.status).toBe(200);
    const ended = readToEnd(watching);

    const anon = consoleBrowser(server);
    const nobody = emailOf("nobody");
    expect(await anon.client.session.requestReset.mutate({ email: ada.email })).toEqual({ ok: true });
    expect(await anon.client.session.requestReset.mutate({ email: nobody })).toEqual({ ok: true });
    await expect.poll(() => linkIn(ada.email), { timeout: 10_000 }).toBeTruthy();
    const token = linkIn(ada.email) ?? "";
    expect(mails.some((mail) => mail.to === nobody)).toBe(false);

    expect(await anon.client.session.resetUsable.query({ token })).toEqual({ ok: true });
    const newPassword = "a brand new password";
    expect(await anon.client.session.reset.mutate({ token, password: newPassword })).toEqual({ email: ada.email });
    // Every session of the account ended: their next calls are refused, the live view closed.
    expect(await failure(ada.browser.client.stores.list.query())).toMatchObject({ httpStatus: 401 });
    expect(await failure(elsewhere.client.stores.list.query())).toMatchObject({ httpStatus: 401 });
    expect(await ended).toContain('event: end\ndata: {"reason":"session_ended"}');
    // Once only.
    expect(await failure(anon.client.session.reset.mutate({ token, password: "yet another password" }))).toMatchObject({ httpStatus: 404, errorCode: "reset_invalid" });
    expect(await failure(anon.client.session.resetUsable.query({ token }))).toMatchObject({ httpStatus: 404, errorCode: "reset_invalid" });
    // The new password signs in; the old one no longer does.
    expect(await failure(consoleBrowser(server).client.session.signIn.mutate({ email: ada.email, password: PASSWORD }))).toMatchObject({ httpStatus: 401 });
    const back = await signedInAgain(ada.email, newPassword);
    const audit = await back.client.team.audit.query({ action: "account.password_reset" });
    expect(audit).toMatchObject([{ actor: ada.email, action: "account.password_reset", address: expect.stringMatching(/127\.0\.0\.1/) }]);
  });

  it("refuses a link past its hour", async () => {
    const bo = await owner();
    await consoleBrowser(server).client.session.requestReset.mutate({ email: bo.email });
    await expect.poll(() => linkIn(bo.email), { timeout: 10_000 }).toBeTruthy();
    const token = linkIn(bo.email) ?? "";
    await server.db.updateTable("password_resets").set({ expires_at: new Date(Date.now() - 1000) }).where("account_id", "in", (qb) => qb.selectFrom("accounts").select("id").where("email", "=", bo.email)).execute();
    expect(await failure(consoleBrowser(server).client.session.reset.mutate({ token, password: "a brand new password" }))).toMatchObject({ httpStatus: 404, errorCode: "reset_invalid" });
    expect(await bo.browser.client.session.me.query()).toMatchObject({ email: bo.email });
  });
});

describe("sessions", () => {
  it("lists the account's sessions with address and browser; one ended from another is refused at its next call, its live view closed", async () => {
    const cy = await owner("Firefox on a laptop");
    const phone = await signedInAgain(cy.email, PASSWORD, "Safari on a phone");
    const sessions = await cy.browser.client.session.list.query();
    expect(sessions.map((session) => [session.user_agent, session.current]).sort()).toEqual([
      ["Firefox on a laptop", true],
      ["Safari on a phone", false],
    ]);
    expect(sessions.every((session) => session.address?.includes("127.0.0.1"))).toBe(true);
    const watching = await fetch(`${server.url}/console/live/${cy.store.id}`, { headers: { Cookie: phone.cookieHeader() } });
    const ended = readToEnd(watching);
    const other = sessions.find((session) => !session.current);
    await cy.browser.client.session.end.mutate({ id: other?.id ?? 0 });
    expect(await failure(phone.client.stores.list.query())).toMatchObject({ httpStatus: 401, errorCode: "sign_in_required" });
    expect(await ended).toContain('"reason":"session_ended"');
    expect((await cy.browser.client.session.list.query()).map((session) => session.user_agent)).toEqual(["Firefox on a laptop"]);
    // Another account's session id answers as an unknown one.
    const stranger = await owner();
    const [theirs] = await stranger.browser.client.session.list.query();
    expect(await failure(cy.browser.client.session.end.mutate({ id: theirs?.id ?? 0 }))).toMatchObject({ httpStatus: 404, errorCode: "session_not_found" });
    expect(await stranger.browser.client.session.me.query()).toMatchObject({ email: stranger.email });
  });

  it("a password change ends the account's other sessions, not this one; a wrong current password is refused", async () => {
    const di = await owner();
    const other = await signedInAgain(di.email);
    const watching = await fetch(`${server.url}/console/live/${di.store.id}`, { headers: { Cookie: other.cookieHeader() } });
    const ended = readToEnd(watching);
    expect(await failure(di.browser.client.session.changePassword.mutate({ current_password: "not it at all", new_password: "a brand new password" }))).toMatchObject({
      httpStatus: 422,
      errorCode: "password_incorrect",
      details: [{ path: "current_password", message: "is not your current password" }],
    });
    expect(await di.browser.client.session.changePassword.mutate({ current_password: PASSWORD, new_password: "a brand new password" })).toEqual({ ended: 1 });
    expect(await ended).toContain('"reason":"session_ended"');
    expect(await failure(other.client.stores.list.query())).toMatchObject({ httpStatus: 401 });
    expect((await di.browser.client.stores.list.query()).map((store) => store.id)).toEqual([di.store.id]);
    expect((await di.browser.client.team.audit.query({ action: "account.password_changed" })).map((entry) => entry.actor)).toEqual([di.email]);
  });
});

describe("roles", () => {
  it("refuses a member an owner's procedures with 403 owner_required; an owner promotes them; the last owner cannot step down", async () => {
    const ed = await owner();
    const memberEmail = emailOf("member");
    await ed.browser.client.team.invite.mutate({ email: memberEmail });
    const member = consoleBrowser(server);
    await joinByInvitation(server, member, await mailedInvitation(memberEmail));
    expect(await member.client.session.me.query()).toMatchObject({ role: "member" });
    // A member runs stores and keys...
    expect((await member.client.stores.list.query()).map((store) => store.id)).toEqual([ed.store.id]);
    await member.client.keys.create.mutate({ name: "member's key" });
    // ...but not the team.
    const members = (await member.client.team.members.query()).members;
    const edId = members.find((row) => row.email === ed.email)?.id ?? 0;
    const memberId = members.find((row) => row.email === memberEmail)?.id ?? 0;
    expect(members.map((row) => [row.email, row.role])).toEqual([
      [ed.email, "owner"],
      [memberEmail, "member"],
    ]);
    const refused = [
      () => member.client.team.invite.mutate({ email: emailOf("x") }),
      () => member.client.team.remove.mutate({ member_id: edId }),
      () => member.client.team.setRole.mutate({ member_id: memberId, role: "owner" }),
      () => member.client.team.revokeInvitation.mutate({ id: 1 }),
      () => member.client.team.renewInvitation.mutate({ id: 1 }),
    ];
    for (const call of refused) expect(await failure(call())).toMatchObject({ httpStatus: 403, errorCode: "owner_required", message: "Only an owner of the team can do this" });

    await ed.browser.client.team.setRole.mutate({ member_id: memberId, role: "owner" });
    expect(await member.client.session.me.query()).toMatchObject({ role: "owner" });
    await member.client.team.setRole.mutate({ member_id: edId, role: "member" });
    expect(await failure(member.client.team.setRole.mutate({ member_id: memberId, role: "member" }))).toMatchObject({ httpStatus: 409, errorCode: "last_owner" });
    // Another team's member answers as unknown.
    const stranger = await owner();
    const theirs = (await stranger.browser.client.team.members.query()).members[0]?.id ?? 0;
    expect(await failure(member.client.team.setRole.mutate({ member_id: theirs, role: "member" }))).toMatchObject({ httpStatus: 404, errorCode: "member_not_found" });
    expect((await member.client.team.audit.query({ action: "member.role_changed" })).map((entry) => entry.target)).toEqual([`${ed.email}: member`, `${memberEmail}: owner`]);
  });
});

describe("the audit of signing in", () => {
  it("keeps sign-in, failed sign-in and sign-out with address and browser, filtered by action and member; a throttled sign-in says when to retry", async () => {
    const fay = await owner();
    const wrong = consoleBrowser(server, server.url, "Guessing script");
    expect(await failure(wrong.client.session.signIn.mutate({ email: fay.email, password: "wrong password!" }))).toMatchObject({ httpStatus: 401 });
    const again = await signedInAgain(fay.email, PASSWORD, "Browser C");
    await again.client.session.signOut.mutate();
    const entries = await fay.browser.client.team.audit.query({ actor: fay.email });
    const seen = entries.map((entry) => [entry.action, entry.user_agent]);
    expect(seen).toEqual(expect.arrayContaining([["session.sign_in_failed", "Guessing script"], ["session.signed_in", "Browser C"], ["session.signed_out", "Browser C"]]));
    expect(entries.every((entry) => entry.address?.includes("127.0.0.1"))).toBe(true);
    expect((await fay.browser.client.team.audit.query({ action: "session.sign_in_failed" })).map((entry) => entry.actor)).toEqual([fay.email]);
    expect(await failure(fay.browser.client.team.audit.query({ action: "not.an.action" as "session.signed_in" }))).toMatchObject({ httpStatus: 400 });

    // Three failures from here since the last sign-in (this server's limit): the fourth is throttled, with Retry-After.
    for (let i = 0; i < 3; i++) await failure(wrong.client.session.signIn.mutate({ email: fay.email, password: "wrong password!" }));
    const throttled = await fetch(`${server.url}/console/trpc/session.signIn`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Origin: server.url },
      body: JSON.stringify({ email: fay.email, password: "wrong password!" }),
    });
    expect(throttled.status).toBe(429);
    expect(Number(throttled.headers.get("retry-after"))).toBeGreaterThan(0);
  });

  it("never writes a secret to a log line, an answer or the audit log: passwords, their hashes, reset tokens", async () => {
    const gus = await owner();
    await consoleBrowser(server).client.session.requestReset.mutate({ email: gus.email });
    await expect.poll(() => linkIn(gus.email), { timeout: 10_000 }).toBeTruthy();
    const token = linkIn(gus.email) ?? "";
    const secretPassword = "my very secret new password";
    await consoleBrowser(server).client.session.reset.mutate({ token, password: secretPassword });
    const back = await signedInAgain(gus.email, secretPassword);
    const hash = (await server.db.selectFrom("accounts").select("password_hash").where("email", "=", gus.email).executeTakeFirstOrThrow()).password_hash;
    const answers = JSON.stringify([await back.client.session.list.query(), await back.client.team.audit.query({}), await back.client.team.members.query(), await back.client.session.me.query()]);
    const auditRows = JSON.stringify(await server.db.selectFrom("audit_log").selectAll().execute());
    for (const secret of [token, secretPassword, PASSWORD, hash]) {
      expect(answers).not.toContain(secret);
      expect(auditRows).not.toContain(secret);
      expect(logged.join("\n")).not.toContain(secret);
    }
  });
});

/** The code an authenticator app with this secret shows `stepsAhead` periods from now. */
const codeOf = (secret: string, stepsAhead = 0) => new TOTP({ secret: Secret.fromBase32(secret) }).generate({ timestamp: Date.now() + stepsAhead * 30_000 });

describe("two-factor sign-in", () => {
  it("is set up with a code from the authenticator, then asked at sign-in: a code works once, a recovery code once", async () => {
    const hal = await owner();
    expect(await hal.browser.client.session.twoFactor.query()).toEqual({ enabled: false, recovery_codes_left: 0, required_by: [] });
    expect(await failure(hal.browser.client.session.twoFactorConfirm.mutate({ code: "123456" }))).toMatchObject({ httpStatus: 409, errorCode: "two_factor_not_pending" });
    const setup = await hal.browser.client.session.twoFactorBegin.mutate();
    expect(setup.uri).toMatch(/^otpauth:\/\/totp\/Commerce%20Ingest:/);
    expect(await failure(hal.browser.client.session.twoFactorConfirm.mutate({ code: "000000" === codeOf(setup.secret) ? "111111" : "000000" }))).toMatchObject({ httpStatus: 401, errorCode: "second_factor_invalid" });
    const { recovery_codes: codes } = await hal.browser.client.session.twoFactorConfirm.mutate({ code: codeOf(setup.secret) });
    expect(codes).toHaveLength(10);
    expect(await hal.browser.client.session.twoFactor.query()).toMatchObject({ enabled: true, recovery_codes_left: 10 });

    // The password alone no longer signs in: a challenge comes back, and no cookie.
    const phone = consoleBrowser(server, server.url, "Phone");
    const first = await phone.client.session.signIn.mutate({ email: hal.email, password: PASSWORD });
    expect(first).toMatchObject({ ok: false, second_factor: "code", challenge: expect.any(String) });
    expect(phone.jar.size).toBe(0);
    const challenge = "challenge" in first ? first.challenge : "";
    expect(await failure(phone.client.session.secondFactor.mutate({ challenge, code: "12345" }))).toMatchObject({ httpStatus: 401, errorCode: "second_factor_invalid" });
    // The next period's code (a phone's clock a little ahead) signs in; the same code again does not.
    const code = codeOf(setup.secret, 1);
    expect(await phone.client.session.secondFactor.mutate({ challenge, code })).toEqual({ ok: true });
    expect(await phone.client.session.me.query()).toMatchObject({ email: hal.email });
    const again = consoleBrowser(server);
    const second = await again.client.session.signIn.mutate({ email: hal.email, password: PASSWORD });
    const secondChallenge = "challenge" in second ? second.challenge : "";
    expect(await failure(again.client.session.secondFactor.mutate({ challenge: secondChallenge, code }))).toMatchObject({ errorCode: "second_factor_invalid" });
    // A recovery code signs in, once.
    expect(await again.client.session.secondFactor.mutate({ challenge: secondChallenge, recovery_code: ` ${(codes[0] ?? "").toUpperCase()} ` })).toEqual({ ok: true });
    const third = consoleBrowser(server);
    const thirdTry = await third.client.session.signIn.mutate({ email: hal.email, password: PASSWORD });
    expect(await failure(third.client.session.secondFactor.mutate({ challenge: "challenge" in thirdTry ? thirdTry.challenge : "", recovery_code: codes[0] ?? "" }))).toMatchObject({ errorCode: "second_factor_invalid" });
    expect(await hal.browser.client.session.twoFactor.query()).toMatchObject({ recovery_codes_left: 9 });

    const actions = (await hal.browser.client.team.audit.query({ actor: hal.email })).map((entry) => [entry.action, entry.target]);
    expect(actions).toEqual(expect.arrayContaining([
      ["account.two_factor_enabled", hal.email],
      ["account.recovery_code_used", hal.email],
      ["session.signed_in", `${hal.email} (recovery code)`],
      ["session.signed_in", `${hal.email} (two-factor)`],
    ]));
    // Turned off with the password: the password alone signs in again.
    expect(await failure(hal.browser.client.session.twoFactorDisable.mutate({ password: "not my password" }))).toMatchObject({ errorCode: "password_incorrect" });
    await hal.browser.client.session.twoFactorDisable.mutate({ password: PASSWORD });
    expect(await consoleBrowser(server).client.session.signIn.mutate({ email: hal.email, password: PASSWORD })).toEqual({ ok: true });
    expect((await hal.browser.client.team.audit.query({ action: "account.two_factor_disabled" })).map((entry) => entry.actor)).toEqual([hal.email]);
    // The secret was shown once, at its setup: in no audit entry, log line or later answer.
    const later = JSON.stringify([await hal.browser.client.session.twoFactor.query(), await hal.browser.client.team.audit.query({})]);
    for (const secret of [setup.secret, ...codes]) {
      expect(later).not.toContain(secret);
      expect(JSON.stringify(await server.db.selectFrom("audit_log").selectAll().execute())).not.toContain(secret);
      expect(logged.join("\n")).not.toContain(secret);
    }
  });

  it("required by a team: a member without it sets it up at the next sign-in before any session; five wrong codes end the sign-in", async () => {
    const ida = await owner();
    const memberEmail = emailOf("member");
    await ida.browser.client.team.invite.mutate({ email: memberEmail });
    const member = consoleBrowser(server);
    await joinByInvitation(server, member, await mailedInvitation(memberEmail));
    expect(await failure(member.client.team.updateSettings.mutate({ require_two_factor: true }))).toMatchObject({ httpStatus: 403, errorCode: "owner_required" });
    expect(await ida.browser.client.team.updateSettings.mutate({ require_two_factor: true })).toEqual({ require_two_factor: true });
    expect(await member.client.team.settings.query()).toEqual({ require_two_factor: true });
    // Its session goes on; at its next sign-in, the setup comes first.
    const next = consoleBrowser(server);
    const outcome = await next.client.session.signIn.mutate({ email: memberEmail, password: PASSWORD });
    expect(outcome).toMatchObject({ ok: false, second_factor: "setup" });
    expect(next.jar.size).toBe(0);
    const challenge = "challenge" in outcome ? outcome.challenge : "";
    const setup = await next.client.session.setupBegin.mutate({ challenge });
    const done = await next.client.session.setupConfirm.mutate({ challenge, code: codeOf(setup.secret) });
    expect(done.recovery_codes).toHaveLength(10);
    expect(await next.client.session.me.query()).toMatchObject({ email: memberEmail, role: "member" });
    expect(await next.client.session.twoFactor.query()).toMatchObject({ enabled: true, required_by: [ida.team.name] });
    // From then on a code is asked; five wrong ones end that sign-in.
    const later = consoleBrowser(server);
    const asked = await later.client.session.signIn.mutate({ email: memberEmail, password: PASSWORD });
    expect(asked).toMatchObject({ second_factor: "code" });
    const token = "challenge" in asked ? asked.challenge : "";
    for (let i = 0; i < 5; i++) expect(await failure(later.client.session.secondFactor.mutate({ challenge: token, code: "000000" === codeOf(setup.secret) ? "111111" : "000000" }))).toMatchObject({ errorCode: "second_factor_invalid" });
    expect(await failure(later.client.session.secondFactor.mutate({ challenge: token, code: codeOf(setup.secret) }))).toMatchObject({ httpStatus: 401, errorCode: "challenge_invalid" });
    expect((await ida.browser.client.team.audit.query({ action: "team.two_factor_required" })).map((entry) => entry.target)).toEqual(["required"]);
  });
});

describe("invitations by e-mail", () => {
  it("go to the person invited, never to the inviter, when the service has a mail sender; the mailed link is accepted", async () => {
    const jo = await owner();
    const invitee = emailOf("invitee");
    const sent = await jo.browser.client.team.invite.mutate({ email: invitee });
    expect(sent).toMatchObject({ email: invitee, url: null, mailed: true });
    await expect.poll(() => mails.find((mail) => mail.to === invitee)?.text.match(/\/invite\/([A-Za-z0-9_-]+)/)?.[1], { timeout: 10_000 }).toBeTruthy();
    const token = mails.find((mail) => mail.to === invitee)?.text.match(/\/invite\/([A-Za-z0-9_-]+)/)?.[1] ?? "";
    expect(mails.find((mail) => mail.to === invitee)?.text).toContain(`${jo.email} invites you`);
    const renewed = await jo.browser.client.team.renewInvitation.mutate({ id: (await jo.browser.client.team.invitations.query())[0]?.id ?? 0 });
    expect(renewed.url).toBeNull();
    await expect.poll(() => mails.filter((mail) => mail.to === invitee).length, { timeout: 10_000 }).toBe(2);
    // The first link stopped working with the renewal; the second is accepted.
    expect(await failure(consoleBrowser(server).client.invitation.get.query({ token }))).toMatchObject({ httpStatus: 404 });
    const second = mails.filter((mail) => mail.to === invitee)[1]?.text.match(/\/invite\/([A-Za-z0-9_-]+)/)?.[1] ?? "";
    const browser = consoleBrowser(server);
    await joinByInvitation(server, browser, second);
    expect(await browser.client.session.me.query()).toMatchObject({ email: invitee, role: "member" });
    // The invitation's link is in no answer the inviter saw, and in no log line.
    expect(logged.join("\n")).not.toContain(second);
  });
});
