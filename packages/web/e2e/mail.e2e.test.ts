import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { operator, startProcess, stopAll, tempDir, type Proc, PROCESS_TEST_TIMEOUT_MS } from "../../server/test/processes.js";
import { startInbox, type ReceivedMail } from "../../server/test/smtp.js";
import { browserAvailable, check, explainFailures, launch } from "./browser.js";

vi.setConfig({ testTimeout: PROCESS_TEST_TIMEOUT_MS, hookTimeout: PROCESS_TEST_TIMEOUT_MS });

/**
 * Invitations by e-mail, in Chromium, with the service sending its mail to a
 * real SMTP server started here: the inviter never sees the link; a new
 * address proves itself by the mailed link; an address that has an account
 * gets the page a new address gets, and its owner a notice.
 */
const ADMIN = "browser-test-admin-token-mail1";
const PASSWORD = "a long enough password";
const procs: Proc[] = [];
let inbox: Awaited<ReturnType<typeof startInbox>>;
let mails: ReceivedMail[] = [];
let server: Proc;
let browser: Browser;
let url: string;

/** The first capture of `pattern` in the newest mail to `to`, once the SMTP server has it. */
async function mailed(to: string, pattern: RegExp): Promise<string> {
  const found = () => mails.filter((mail) => mail.to === to && pattern.test(mail.text)).at(-1)?.text.match(pattern)?.[1];
  await expect.poll(found, { timeout: 15_000 }).toBeTruthy();
  return found() ?? "";
}

/** Chooses a password on an invitation's page, up to its "Check your e-mail" answer. */
async function choosePassword(page: Page, link: string, password: string): Promise<string> {
  await page.goto(link);
  await page.getByLabel("Password", { exact: true }).fill(password);
  await page.getByLabel("Repeat the password").fill(password);
  await page.getByRole("button", { name: "Choose this password" }).click();
  await page.getByRole("heading", { name: "Check your e-mail" }).waitFor();
  return page.locator("main").innerText();
}

/** Proves an e-mail by the link mailed to it, which signs in. */
async function verify(page: Page, email: string): Promise<string> {
  const link = await mailed(email, /(https?:\/\/\S+\/verify\/[A-Za-z0-9_-]+)/);
  await page.goto(link);
  await page.getByRole("button", { name: "Confirm and sign in" }).click();
  await page.waitForURL("**/settings/api-keys");
  return link;
}

describe.runIf(browserAvailable())("invitations by e-mail, at 1280 and 390 px", () => {
  explainFailures(() => ({ browser, server }));
  beforeAll(async () => {
    inbox = await startInbox();
    mails = inbox.mails;
    const smtpUrl = inbox.url;
    server = await startProcess("main.js", { DATA_DIR: tempDir(), ADMIN_TOKEN: ADMIN, SEED_DEMO: "false", SMTP_URL: smtpUrl, MAIL_FROM: "Console <console@mail.example>" });
    procs.push(server);
    url = server.url ?? "";
    browser = await launch();
  });
  afterAll(async () => {
    await browser?.close();
    await stopAll(procs);
    await inbox?.close();
  });

  for (const width of [1280, 390]) {
    it(`at ${width} px`, async () => {
      const team = Number((await operator(url, ADMIN, "POST", "/admin/v1/teams", { name: `Mail ${width}` })).id);
      const ownerEmail = `owner-${width}@mail.example`;
      const ownerContext = await browser.newContext({ viewport: { width, height: 800 } });
      const owner = await ownerContext.newPage();
      await choosePassword(owner, String((await operator(url, ADMIN, "POST", "/admin/v1/invitations", { team_id: team, email: ownerEmail })).url), PASSWORD);
      await verify(owner, ownerEmail);

      // An invitation goes to the person invited; the inviter sees that it went, never its link.
      const newEmail = `new-${width}@mail.example`;
      await owner.goto(`${url}/team`);
      await owner.getByLabel("E-mail").fill(newEmail);
      await owner.getByRole("button", { name: "Create invitation link" }).click();
      await owner.getByText(`Invitation sent to ${newEmail} by e-mail`).waitFor();
      expect(await owner.locator(".secret code").count()).toBe(0);
      const invitation = await mailed(newEmail, /(https?:\/\/\S+\/invite\/[A-Za-z0-9_-]+)/);
      expect(await owner.content()).not.toContain(invitation);
      await check(owner, "team-invited-by-mail", width);

      // The new address: a password, then the mailed proof, which signs in.
      const newcomer = await (await browser.newContext({ viewport: { width, height: 800 } })).newPage();
      const newSays = await choosePassword(newcomer, invitation, PASSWORD);
      const proof = await verify(newcomer, newEmail);
      await newcomer.getByText(newEmail).first().waitFor();
      // Both links were opened in a browser: neither secret is in the server's log (which logs every page asked for).
      for (const secret of [invitation, proof].map((link) => link.split("/").at(-1) ?? "")) expect(server.output()).not.toContain(secret);

      // An address that has an account (in another team): the same page, word for word; its owner gets a notice,
      // with no link that would make anything.
      const elsewhere = Number((await operator(url, ADMIN, "POST", "/admin/v1/teams", { name: `Elsewhere ${width}` })).id);
      const takenEmail = `taken-${width}@mail.example`;
      const taken = await (await browser.newContext({ viewport: { width, height: 800 } })).newPage();
      await choosePassword(taken, String((await operator(url, ADMIN, "POST", "/admin/v1/invitations", { team_id: elsewhere, email: takenEmail })).url), PASSWORD);
      await verify(taken, takenEmail);
      await owner.getByLabel("E-mail").fill(takenEmail);
      await owner.getByRole("button", { name: "Create invitation link" }).click();
      await owner.getByText(`Invitation sent to ${takenEmail} by e-mail`).waitFor();
      const holder = await (await browser.newContext({ viewport: { width, height: 800 } })).newPage();
      const holderSays = await choosePassword(holder, await mailed(takenEmail, /(https?:\/\/\S+\/invite\/[A-Za-z0-9_-]+)/), "the holder's password");
      expect(holderSays.replaceAll(takenEmail, "E")).toBe(newSays.replaceAll(newEmail, "E"));
      const notice = await mailed(takenEmail, /(your account already exists)/i);
      expect(notice).toBeTruthy();
      expect(mails.filter((mail) => mail.to === takenEmail && /\/verify\//.test(mail.text))).toHaveLength(1);
      for (const context of browser.contexts()) await context.close();
    });
  }
});
