import { Secret, TOTP } from "otpauth";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { operator, startProcess, stopAll, tempDir, type Proc, PROCESS_TEST_TIMEOUT_MS } from "../../server/test/processes.js";
import { browserAvailable, check, explainFailures, joinByInvitation, launch, linkFromLog } from "./browser.js";

vi.setConfig({ testTimeout: PROCESS_TEST_TIMEOUT_MS, hookTimeout: PROCESS_TEST_TIMEOUT_MS });

/**
 * Accounts a team can trust, in Chromium at a desktop's width and a phone's: a
 * session ended from another (its live view closes, its next page signs in
 * again), a password reset by its e-mailed link (here the server has no mail
 * sender, so the mail is in its log, as a newcomer's is) ending every session,
 * a member refused an owner's procedure, and a throttled sign-in saying when to
 * try again.
 */
const ADMIN = "browser-test-admin-token-8910";
const PASSWORD = "a long enough password";
const procs: Proc[] = [];
let server: Proc;
let browser: Browser;
let url: string;
let teamId: number;
let storeId: number;

async function newContext(width: number): Promise<BrowserContext> {
  return browser.newContext({ viewport: { width, height: 800 } });
}

async function signIn(context: BrowserContext, email: string, password = PASSWORD): Promise<Page> {
  const page = await context.newPage();
  await page.goto(`${url}/sign-in`);
  await page.getByLabel("E-mail").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL("**/settings/api-keys");
  return page;
}

async function acceptInvitation(context: BrowserContext, link: string): Promise<Page> {
  const page = await context.newPage();
  await joinByInvitation(page, link, server, PASSWORD);
  return page;
}

/** The code an authenticator app with this secret shows now (or `stepsAhead` periods on: a code works once). */
const codeOf = (secret: string, stepsAhead = 0) => new TOTP({ secret: Secret.fromBase32(secret) }).generate({ timestamp: Date.now() + stepsAhead * 30_000 });

/** Signs in up to the second factor's page. */
async function passwordStep(context: BrowserContext, email: string, password: string): Promise<Page> {
  const page = await context.newPage();
  await page.goto(`${url}/sign-in`);
  await page.getByLabel("E-mail").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
  return page;
}

/** The last reset link the server's log holds for this e-mail (no mail sender: mails are written there). */
function resetLinkFor(email: string): string | undefined {
  const lines = server.output().split("\n").filter((line) => line.includes("mail not sent") && line.includes(email));
  return lines.at(-1)?.match(/https?:\/\/[^\s"\\]+\/reset\/[A-Za-z0-9_-]+/)?.[0];
}

describe.runIf(browserAvailable())("accounts in the console, at 1280 and 390 px", () => {
  explainFailures(() => ({ browser, server }));
  beforeAll(async () => {
    server = await startProcess("main.js", { DATA_DIR: tempDir(), ADMIN_TOKEN: ADMIN, SEED_DEMO: "false" });
    procs.push(server);
    url = server.url ?? "";
    browser = await launch();
  });
  afterAll(async () => {
    await browser?.close();
    await stopAll(procs);
  });

  for (const width of [1280, 390]) {
    it(`at ${width} px`, async () => {
      // A team of its own each: one width's requirement of two-factor sign-in is not the other's.
      teamId = Number((await operator(url, ADMIN, "POST", "/admin/v1/teams", { name: `Accounts ${width}` })).id);
      storeId = Number((await operator(url, ADMIN, "POST", "/admin/v1/stores", { team_id: teamId, name: "Accounts shop", country: "US" })).id);
      const email = `owner-${width}@accounts.example`;
      const invitation = await operator(url, ADMIN, "POST", "/admin/v1/invitations", { team_id: teamId, email });
      const laptop = await newContext(width);
      const page = await acceptInvitation(laptop, String(invitation.url));

      // Signed in a second time elsewhere, watching the store live; ended from the first: its live view closes.
      const phone = await newContext(width);
      const watching = await signIn(phone, email);
      await watching.goto(`${url}/stores/${storeId}/activity?tab=live`);
      await watching.getByText("Live:", { exact: false }).waitFor();
      await page.goto(`${url}/account`);
      await expect.poll(() => page.locator("table.requests tbody tr").count(), { timeout: 15_000 }).toBe(2);
      await page.getByText("this one").waitFor();
      await check(page, "account", width);
      await page.getByRole("button", { name: /^End the session of/ }).click();
      await watching.getByText("Your session has ended").waitFor({ timeout: 15_000 });
      await watching.goto(`${url}/stores`);
      await watching.waitForURL("**/sign-in**");
      await expect.poll(() => page.locator("table.requests tbody tr").count(), { timeout: 15_000 }).toBe(1);

      // A forgotten password: the link (in the log here), a new password, every session ended.
      const stranger = await newContext(width);
      const forgot = await stranger.newPage();
      await forgot.goto(`${url}/sign-in`);
      await forgot.getByRole("link", { name: "Forgot your password?" }).click();
      await forgot.getByLabel("E-mail").fill(email);
      await forgot.getByRole("button", { name: "Send me a link" }).click();
      await forgot.getByText("a link to choose a new password is on its way").waitFor();
      await check(forgot, "forgot-password", width);
      await expect.poll(() => resetLinkFor(email), { timeout: 10_000 }).toBeTruthy();
      const link = resetLinkFor(email) ?? "";
      await forgot.goto(link.replace(/^https?:\/\/[^/]+/, url));
      await forgot.getByLabel("New password", { exact: true }).fill("a brand new password");
      await forgot.getByLabel("Repeat the new password").fill("a brand new password");
      await check(forgot, "reset-password", width);
      await forgot.getByRole("button", { name: "Set the new password" }).click();
      await forgot.waitForURL("**/sign-in?**reset=1**");
      await forgot.getByText("every session of your account has ended").waitFor();
      // The laptop's session ended with the reset; the link works once.
      await page.goto(`${url}/stores`);
      await page.waitForURL("**/sign-in**");
      await forgot.goto(link.replace(/^https?:\/\/[^/]+/, url));
      await forgot.getByText("This reset link is invalid, already used or expired").waitFor();

      // The owner invites a member, who runs stores but not the team: the console shows no invite form, and the
      // server refuses the procedure itself with the contract's body.
      const owner = await signIn(laptop, email, "a brand new password");
      await owner.goto(`${url}/team`);
      const memberEmail = `member-${width}@accounts.example`;
      await owner.getByLabel("E-mail").fill(memberEmail);
      await owner.getByRole("button", { name: "Create invitation link" }).click();
      const memberLink = await owner.locator(".secret code").innerText();
      const memberContext = await newContext(width);
      const member = await acceptInvitation(memberContext, memberLink);
      await member.goto(`${url}/team`);
      await member.getByText("You are a member").waitFor();
      expect(await member.getByRole("button", { name: "Create invitation link" }).count()).toBe(0);
      expect(await member.getByRole("button", { name: /^Remove / }).count()).toBe(0);
      await check(member, "team-member", width);
      const refused = await member.evaluate(async () => {
        const response = await fetch("/console/trpc/team.invite", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ email: "x@accounts.example" }) });
        return { status: response.status, body: (await response.json()) as { error: { message: string; data: { errorCode: string; httpStatus: number } } } };
      });
      expect(refused).toMatchObject({ status: 403, body: { error: { message: "Only an owner of the team can do this", data: { errorCode: "owner_required", httpStatus: 403 } } } });

      // Two-factor sign-in: set up from the account's page, then asked at sign-in; a recovery code once.
      await owner.goto(`${url}/account`);
      await owner.getByRole("button", { name: "Set up two-factor sign-in" }).click();
      const secret = await owner.getByTestId("totp-secret").innerText();
      await owner.getByLabel("Code from your authenticator app").fill(codeOf(secret));
      await owner.getByRole("button", { name: "Turn on" }).click();
      const codes = (await owner.getByTestId("recovery-codes").innerText()).split("\n");
      expect(codes).toHaveLength(10);
      await owner.getByText("On: each sign-in asks for a code").waitFor();
      await check(owner, "two-factor", width);
      const twice = await newContext(width);
      const asked = await passwordStep(twice, email, "a brand new password");
      await asked.getByRole("heading", { name: "Two-factor sign-in" }).waitFor();
      await check(asked, "two-factor-sign-in", width);
      // The next period's code: the one that turned it on was this period's, and a code works once.
      await asked.getByLabel("Code from your authenticator app").fill(codeOf(secret, 1));
      await asked.getByRole("button", { name: "Verify" }).click();
      await asked.waitForURL("**/settings/api-keys");
      const recovering = await passwordStep(twice, email, "a brand new password");
      await recovering.getByRole("button", { name: "Use a recovery code instead" }).click();
      await recovering.getByLabel("Recovery code").fill(codes[0] ?? "");
      await recovering.getByRole("button", { name: "Verify" }).click();
      await recovering.waitForURL("**/settings/api-keys");
      const reused = await passwordStep(twice, email, "a brand new password");
      await reused.getByRole("button", { name: "Use a recovery code instead" }).click();
      await reused.getByLabel("Recovery code").fill(codes[0] ?? "");
      await reused.getByRole("button", { name: "Verify" }).click();
      await reused.getByText("Wrong code").waitFor();
      await twice.close();

      // Required by the team: the member sets it up at the next sign-in, before the console opens.
      await owner.goto(`${url}/team`);
      // Its state follows the server's answer: clicked, then checked once saved.
      await owner.getByLabel(/Require two-factor sign-in of every member/).click();
      await expect.poll(() => owner.getByLabel(/Require two-factor sign-in of every member/).isChecked(), { timeout: 15_000 }).toBe(true);
      const later = await newContext(width);
      const required = await passwordStep(later, memberEmail, PASSWORD);
      await required.getByRole("heading", { name: "Set up two-factor sign-in" }).waitFor();
      await required.getByRole("button", { name: "Start" }).click();
      const memberSecret = await required.getByTestId("totp-secret").innerText();
      await check(required, "two-factor-setup", width);
      await required.getByLabel("Code from your authenticator app").fill(codeOf(memberSecret));
      await required.getByRole("button", { name: "Turn on and sign in" }).click();
      await required.getByTestId("recovery-codes").waitFor();
      await required.getByRole("button", { name: "Continue to the console" }).click();
      await required.waitForURL("**/settings/api-keys");
      await later.close();

      // An invitation for an e-mail that has an account (in another team): choosing a password on its link answers as
      // for a new address, and the account's owner is told by mail; nothing is made, nobody signed in.
      const elsewhereTeam = Number((await operator(url, ADMIN, "POST", "/admin/v1/teams", { name: `Elsewhere ${width}` })).id);
      const elsewhereEmail = `elsewhere-${width}@accounts.example`;
      const elsewhereContext = await newContext(width);
      await acceptInvitation(elsewhereContext, String((await operator(url, ADMIN, "POST", "/admin/v1/invitations", { team_id: elsewhereTeam, email: elsewhereEmail })).url));
      await elsewhereContext.close();
      await owner.goto(`${url}/team`);
      await owner.getByLabel("E-mail").fill(elsewhereEmail);
      await owner.getByRole("button", { name: "Create invitation link" }).click();
      const holderLink = await owner.locator(".secret code").innerText();
      const holder = await (await newContext(width)).newPage();
      await holder.goto(holderLink);
      await holder.getByLabel("Password", { exact: true }).fill("the holder's password");
      await holder.getByLabel("Repeat the password").fill("the holder's password");
      await holder.getByRole("button", { name: "Choose this password" }).click();
      await holder.getByRole("heading", { name: "Check your e-mail" }).waitFor();
      const holderSays = (await holder.locator("main").innerText()).replaceAll(elsewhereEmail, "E");
      await check(holder, "invitation-sent", width);
      // A new address's page says the same, word for word.
      const freshEmail = `fresh-${width}@accounts.example`;
      await owner.getByLabel("E-mail").fill(freshEmail);
      await owner.getByRole("button", { name: "Create invitation link" }).click();
      await expect.poll(() => owner.locator(".secret code").innerText(), { timeout: 15_000 }).not.toBe(holderLink);
      const fresh = await holder.context().newPage();
      await fresh.goto(await owner.locator(".secret code").innerText());
      await fresh.getByLabel("Password", { exact: true }).fill("the holder's password");
      await fresh.getByLabel("Repeat the password").fill("the holder's password");
      await fresh.getByRole("button", { name: "Choose this password" }).click();
      await fresh.getByRole("heading", { name: "Check your e-mail" }).waitFor();
      expect((await fresh.locator("main").innerText()).replaceAll(freshEmail, "E").replace(/Elsewhere \d+|Accounts \d+/g, "T")).toBe(holderSays.replace(/Elsewhere \d+|Accounts \d+/g, "T"));
      await expect.poll(() => server.output().includes(`"to":"${elsewhereEmail}","subject":"An invitation to`), { timeout: 15_000 }).toBe(true);
      expect(linkFromLog(server, elsewhereEmail, "verify")).toBeUndefined();
      await holder.context().close();

      // Ten wrong passwords from here: the next sign-in says when to try again.
      for (let i = 0; i < 10; i++) {
        await fetch(`${url}/console/trpc/session.signIn`, {
          method: "POST",
          headers: { "Content-Type": "application/json", Origin: url },
          body: JSON.stringify({ email: memberEmail, password: "wrong password!" }),
        });
      }
      const late = await stranger.newPage();
      await late.goto(`${url}/sign-in`);
      await late.getByLabel("E-mail").fill(memberEmail);
      await late.getByLabel("Password").fill("wrong password!");
      await late.getByRole("button", { name: "Sign in" }).click();
      await late.getByText(/Too many attempts\. Try again in \d+ (seconds|minutes) \(at /).waitFor();

      for (const context of [laptop, phone, stranger, memberContext]) await context.close();
    });
  }
});
