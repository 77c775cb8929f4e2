import net from "node:net";
import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { LIMITS } from "@commerce-ingest/shared";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { distFile, operator, startProcess, stopAll, tempDir, type Proc, PROCESS_TEST_TIMEOUT_MS } from "../../server/test/processes.js";
import { ARTIFACTS, browserAvailable, explainFailures, joinByInvitation, launch } from "./browser.js";

// Each test starts processes: on a busy machine that takes longer (see PROCESS_START_TIMEOUT_MS).
vi.setConfig({ testTimeout: PROCESS_TEST_TIMEOUT_MS, hookTimeout: PROCESS_TEST_TIMEOUT_MS });

const run = promisify(execFile);
const ADMIN = "browser-test-admin-token-0123";
const PASSWORD = "a long enough password";
const procs: Proc[] = [];
let browser: Browser;
let url: string;
let dataDir: string;
let server: Proc;

const shot = (page: Page, name: string) => page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true });

/** `pnpm admin member invite`, as an operator runs it; returns the printed link. */
async function inviteWithCli(teamId: number, email: string): Promise<string> {
  const { stdout } = await run(process.execPath, [distFile("admin.js"), "member", "invite", "--team", String(teamId), "--email", email], {
    env: { PATH: process.env.PATH ?? "", ADMIN_URL: url, ADMIN_TOKEN: ADMIN, DATA_DIR: dataDir },
  });
  return String((JSON.parse(stdout) as { url: string }).url);
}

async function tenant(name: string) {
  const team = await operator(url, ADMIN, "POST", "/admin/v1/teams", { name });
  const store = await operator(url, ADMIN, "POST", "/admin/v1/stores", { team_id: team.id, name: `${name} shop`, country: "US" });
  return { teamId: Number(team.id), storeId: Number(store.id) };
}

const push = (storeId: number, key: string) =>
  fetch(`${url}/api/v1/stores/${storeId}/customers`, {
    method: "POST",
    headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
    body: JSON.stringify({ external_id: "from-the-console", phone: "+12025550143", first_name: "Ada" }),
  });

/** Opens the invitation, chooses the password, and lands signed in on the API Keys page. */
async function join(page: Page, link: string) {
  await joinByInvitation(page, link, server, PASSWORD);
}

describe.runIf(browserAvailable())("the web console in Chromium", () => {
  explainFailures(() => ({ browser, server }));
  beforeAll(async () => {
    dataDir = tempDir();
    server = await startProcess("main.js", { DATA_DIR: dataDir, ADMIN_TOKEN: ADMIN, SEED_DEMO: "false" });
    procs.push(server);
    url = server.url ?? "";
    browser = await launch();
  });
  afterAll(async () => {
    await browser?.close();
    await stopAll(procs);
  });

  it("invitation, password, API key shown once and used over REST, listed without its value, deleted (401), sign-out", async () => {
    const { teamId, storeId } = await tenant("Acme");
    const link = await inviteWithCli(teamId, "owner@acme.example");
    expect(link).toMatch(new RegExp(`^${url}/invite/`));
    const page = await browser.newPage();
    await page.goto(link);
    await expect.poll(() => page.getByRole("heading", { name: "Join Acme" }).isVisible()).toBe(true);
    await shot(page, "01-invitation");
    await join(page, link);
    await expect.poll(() => page.getByText("No keys yet").isVisible()).toBe(true);
    await shot(page, "02-api-keys-empty");

    await page.getByRole("button", { name: "Add key" }).click();
    await page.getByLabel("Name").fill("shop backend");
    await shot(page, "03-add-key");
    await page.getByRole("button", { name: "Create key" }).click();
    const value = (await page.getByTestId("new-key-value").textContent()) ?? "";
    expect(value).toMatch(/^[A-Za-z0-9]{24}$/);
    expect(await page.getByText("You will not see it again").isVisible()).toBe(true);
    expect(await page.locator("pre").first().textContent()).toContain(`/api/v1/stores/${storeId}/customers`);
    await shot(page, "04-key-shown-once");

    expect((await push(storeId, value)).status).toBe(201);
    await page.getByRole("button", { name: "Done" }).click();
    await page.reload();
    const row = page.getByRole("row", { name: /shop backend/ });
    await expect.poll(() => row.isVisible()).toBe(true);
    expect(await row.textContent()).toContain(`…${value.slice(-4)}`);
    expect(await page.content()).not.toContain(value);
    await shot(page, "05-api-keys-listed");

    // Rolled with no overlap: the new key works, the old one is refused from the next request.
    await page.getByRole("button", { name: "Roll shop backend" }).click();
    await page.getByLabel("The old key").selectOption({ label: "Stop the old key now" });
    await page.getByRole("button", { name: "Roll key" }).click();
    const rolled = (await page.getByTestId("rolled-key-value").textContent()) ?? "";
    expect(rolled).toMatch(/^[A-Za-z0-9]{24}$/);
    expect((await push(storeId, value)).status).toBe(401);
    expect((await push(storeId, rolled)).status).toBe(200);
    await page.getByRole("button", { name: "Done" }).click();
    await expect.poll(() => page.getByRole("row", { name: /shop backend/ }).textContent()).toContain(`…${rolled.slice(-4)}`);

    await page.getByRole("button", { name: "Delete shop backend" }).click();
    await page.getByRole("button", { name: "Delete key" }).click();
    await expect.poll(() => page.getByText("No keys yet").isVisible()).toBe(true);
    expect((await push(storeId, value)).status).toBe(401);

    await page.getByRole("link", { name: "Stores" }).click();
    await expect.poll(() => page.getByText(String(storeId), { exact: true }).isVisible()).toBe(true);
    await shot(page, "06-stores");
    await page.getByRole("link", { name: "Activity" }).click();
    await page.getByRole("tab", { name: "Request log" }).click();
    await expect.poll(() => page.getByText(`/api/v1/stores/${storeId}/customers`).first().isVisible()).toBe(true);
    // A call refused with the deleted key, made while the log is open, shows in it without a reload.
    const refused = await push(storeId, value);
    expect(refused.status).toBe(401);
    const requestId = refused.headers.get("x-request-id") ?? "";
    await expect.poll(() => page.getByRole("row", { name: new RegExp(requestId) }).textContent(), { interval: 100 }).toMatch(/401.*Invalid API key/);
    await shot(page, "07-request-log");

    // Each change to the key is in the audit log, by the member who made it.
    await page.getByRole("link", { name: "Audit log" }).click();
    await page.getByRole("cell", { name: "key.deleted" }).waitFor();
    const audit = await page.getByRole("row").allTextContents();
    for (const action of ["member.joined", "key.created", "key.rolled", "key.deleted"]) {
      expect(audit.some((entry) => entry.includes(`owner@acme.example${action}shop backend`) || (action === "member.joined" && entry.includes(`owner@acme.example${action}`)))).toBe(true);
    }

    await page.getByRole("button", { name: "Sign out" }).click();
    await page.waitForURL("**/sign-in");
    await page.goto(`${url}/settings/api-keys`);
    await page.waitForURL("**/sign-in?next=%2Fsettings%2Fapi-keys");
    await shot(page, "08-signed-out");

    // Signing in again, with the password chosen from the invitation.
    await page.getByLabel("E-mail").fill("owner@acme.example");
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL("**/settings/api-keys");
    await page.close();
  });

  /** The chunks of import files the server has stored so far, from its metrics. */
  const storedChunks = async () => Number(/^import_upload_chunks_total (\d+)/m.exec(await (await fetch(`${url}/metrics`, { headers: { Authorization: `Bearer ${ADMIN}` } })).text())?.[1] ?? 0);

  it("follows an import in the store's Imports tab, linked by its address, downloads its refused lines, and shows a cut-off upload failed with its code", async () => {
    const { teamId, storeId } = await tenant("Importer");
    const key = await operator(url, ADMIN, "POST", "/admin/v1/keys", { team_id: teamId, name: "backfill" });
    const lines = [...Array.from({ length: 1500 }, (_, i) => JSON.stringify({ external_id: `c-${i}`, phone: `+1202555${String(1000 + i)}` })), '{"external_id":"c-bad","phone":"12"}'];
    const upload = await fetch(`${url}/api/v1/stores/${storeId}/imports?kind=customers`, {
      method: "POST",
      headers: { Authorization: `Bearer ${String(key.key)}`, "Content-Type": "application/x-ndjson" },
      body: `${lines.join("\n")}\n`,
    });
    expect(upload.status).toBe(202);
    const { id } = (await upload.json()) as { id: number };
    // Another upload, cut off once its first chunk is stored: it shows as failed, with why.
    const cutLines = Array.from({ length: LIMITS.importChunkLines + 200 }, (_, i) => JSON.stringify({ external_id: `cut-${i}`, phone: `+1202555${String(1000 + (i % 1500))}` }));
    const chunksBefore = await storedChunks();
    const cut = net.connect(Number(new URL(url).port), "127.0.0.1");
    cut.on("error", () => undefined);
    cut.write(`POST /api/v1/stores/${storeId}/imports?kind=customers HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${String(key.key)}\r\nContent-Type: application/x-ndjson\r\nContent-Length: 10000000\r\n\r\n${cutLines.join("\n")}\n`);
    const page = await browser.newPage();
    await join(page, await inviteWithCli(teamId, "owner@importer.example"));
    await page.goto(`${url}/stores/${storeId}/activity?tab=imports`);
    const row = page.getByRole("row", { name: new RegExp(`#${id} customers`) });
    await expect.poll(() => row.textContent()).toMatch(/succeeded.*1,501 \/ 1,501.*1,500.*0.*1/);
    await expect.poll(storedChunks).toBeGreaterThan(chunksBefore);
    cut.destroy();
    const failed = page.getByRole("row", { name: new RegExp(`#${id + 1} customers`) });
    await expect.poll(() => failed.textContent()).toMatch(/failed\s*upload_interrupted the upload ended before the whole file arrived/);
    expect(await page.getByRole("tab", { name: "Imports" }).getAttribute("aria-selected")).toBe("true");
    await page.setViewportSize({ width: 1280, height: 720 });
    await shot(page, "09-imports");
    await page.screenshot({ path: path.resolve(import.meta.dirname, "../../../docs/console-imports.png") });
    const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("button", { name: "Download errors" }).click()]);
    expect(download.suggestedFilename()).toBe(`import-${id}-errors.ndjson`);
    const refused = fs.readFileSync(await download.path(), "utf8").trim().split("\n").map((line) => JSON.parse(line) as { line: number; external_id: string });
    expect(refused).toEqual([expect.objectContaining({ line: 1501, external_id: "c-bad", code: "validation_failed" })]);
    await page.close();
  });

  it("ships its production build without source maps: none built, none served", async () => {
    const assets = fs.readdirSync(path.resolve(import.meta.dirname, "..", "dist", "assets"));
    const scripts = assets.filter((file) => file.endsWith(".js"));
    expect(scripts.length).toBeGreaterThan(0);
    expect(assets.filter((file) => file.endsWith(".map"))).toEqual([]);
    for (const script of scripts) {
      const res = await fetch(`${url}/assets/${script}.map`);
      expect(res.status).toBe(404);
      expect(fs.readFileSync(path.resolve(import.meta.dirname, "..", "dist", "assets", script), "utf8")).not.toContain("sourceMappingURL");
    }
  });

  it("invites alike whether the e-mail has an account in another team or none; that account joins by signing in and switches teams", async () => {
    const gamma = await tenant("Gamma");
    const delta = await tenant("Delta");
    const ada = await browser.newPage();
    await join(ada, await inviteWithCli(gamma.teamId, "ada@gamma.example"));
    await ada.close();
    const bob = await browser.newPage();
    await join(bob, await inviteWithCli(delta.teamId, "bob@delta.example"));
    await bob.goto(`${url}/team`);
    /** What the inviting member sees after inviting `email`, with the e-mail, the link's token and the time taken out. */
    const inviteAnswer = async (email: string) => {
      await bob.getByLabel("E-mail").fill(email);
      await bob.getByRole("button", { name: "Create invitation link" }).click();
      const panel = bob.locator(".secret", { hasText: `Send this link to ${email}` });
      await panel.waitFor();
      const link = (await panel.locator("code").textContent()) ?? "";
      const seen = await panel.evaluate((element) => {
        const copy = element.cloneNode(true) as HTMLElement;
        for (const time of copy.querySelectorAll("time")) time.textContent = "(time)";
        return copy.textContent ?? "";
      });
      return { link, seen: seen.replaceAll(email, "(e-mail)").replace(/\/invite\/[\w-]+/, "/invite/(token)") };
    };
    const withAccount = await inviteAnswer("ada@gamma.example");
    const withoutAccount = await inviteAnswer("nobody@delta.example");
    expect(withAccount.seen).toBe(withoutAccount.seen);
    await shot(bob, "09-invite-any-email");

    // Ada opens the link, signs in with her Gamma password, and joins Delta.
    const page = await browser.newPage();
    await page.goto(withAccount.link);
    await page.getByRole("link", { name: "Sign in to accept" }).click();
    await expect.poll(() => page.getByLabel("E-mail").inputValue()).toBe("ada@gamma.example");
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("button", { name: "Join Delta" }).click();
    await page.waitForURL("**/settings/api-keys");
    const teamSwitch = page.getByLabel("Team", { exact: true });
    expect(await teamSwitch.locator("option:checked").textContent()).toBe("Delta");
    await shot(page, "10-two-teams");
    await teamSwitch.selectOption({ label: "Gamma" });
    // The switch settles on Gamma; a refused one would say why in an alert, read here instead of waiting on.
    const switched = () => page.evaluate(() => document.querySelector("[role=alert]")?.textContent ?? document.querySelector("select.team option:checked")?.textContent);
    await expect.poll(switched).toBe("Gamma");
    await page.getByRole("link", { name: "Stores" }).click();
    await page.getByRole("cell", { name: "Gamma shop" }).waitFor();
    expect(await page.content()).not.toContain("Delta shop");
    await bob.goto(`${url}/team`);
    await bob.getByRole("cell", { name: "ada@gamma.example", exact: true }).waitFor();

    // The other invitation revoked: its link is refused.
    await bob.getByRole("button", { name: "Revoke the invitation of nobody@delta.example" }).click();
    await bob.getByRole("dialog", { name: "Revoke the invitation" }).getByRole("button", { name: "Revoke the invitation" }).click();
    await bob.getByText("No pending invitations.").waitFor();
    const revoked = await browser.newPage();
    await revoked.goto(withoutAccount.link);
    await revoked.getByText("This invitation link is invalid, already used or expired").waitFor();
    // Each of these changes is in Delta's audit log, by whom.
    await bob.getByRole("link", { name: "Audit log" }).click();
    await bob.getByRole("cell", { name: "invitation.revoked" }).waitFor();
    const entries = await bob.getByRole("row").allTextContents();
    for (const [action, actor, target] of [
      ["member.invited", "bob@delta.example", "ada@gamma.example"],
      ["member.invited", "bob@delta.example", "nobody@delta.example"],
      ["member.joined", "ada@gamma.example", "ada@gamma.example"],
      ["invitation.revoked", "bob@delta.example", "nobody@delta.example"],
    ]) {
      expect(entries.some((entry) => entry.includes(`${actor}${action}${target}`))).toBe(true);
    }

    // Removed from Delta while her console still lists it, Ada cannot switch back: she is told, and stays on Gamma.
    await bob.getByRole("link", { name: "Team" }).click();
    await bob.getByRole("button", { name: "Remove ada@gamma.example" }).click();
    await bob.getByRole("dialog", { name: "Remove the member" }).getByRole("button", { name: "Remove the member" }).click();
    await bob.getByRole("cell", { name: "ada@gamma.example", exact: true }).waitFor({ state: "detached" });
    await teamSwitch.selectOption({ label: "Delta" });
    await page.getByRole("alert").filter({ hasText: "The team was not switched: Team not found" }).waitFor();
    await page.locator("span.team", { hasText: "Gamma" }).waitFor();
    await page.getByRole("cell", { name: "Gamma shop" }).waitFor();
    await shot(page, "11-switch-refused");
    await Promise.all([page.close(), bob.close(), revoked.close()]);
  });

  it("a member of another team can neither see nor delete this team's keys through the console's procedures", async () => {
    const a = await tenant("Alpha");
    const keyA = await operator(url, ADMIN, "POST", "/admin/v1/keys", { team_id: a.teamId, name: "alpha key" });
    const b = await tenant("Beta");
    const page = await browser.newPage();
    await join(page, await inviteWithCli(b.teamId, "member@beta.example"));
    expect(await page.content()).not.toContain("alpha key");
    const attempt = await page.evaluate(async (id: number) => {
      const response = await fetch("/console/trpc/keys.delete", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ id }) });
      return { status: response.status, body: (await response.json()) as { error?: { message?: string } } };
    }, Number(keyA.id));
    expect(attempt.status).toBe(404);
    expect(attempt.body.error?.message).toBe("API key not found");
    expect((await push(a.storeId, String(keyA.key))).status).toBe(201);
    await page.close();
  });
});
