import { createHmac } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { operator, startProcess, stopAll, tempDir, type Proc, PROCESS_TEST_TIMEOUT_MS } from "../../server/test/processes.js";
import { browserAvailable, check, explainFailures, joinByInvitation, launch } from "./browser.js";

vi.setConfig({ testTimeout: PROCESS_TEST_TIMEOUT_MS, hookTimeout: PROCESS_TEST_TIMEOUT_MS });

/**
 * What an integrator debugging a call and an operator running delivery do in
 * the console, in Chromium at a desktop's width and a phone's: a store's own
 * endpoint set, tested and its secret rolled; a failed message sent again once
 * its endpoint recovers; a record's page; a 429 flood filtered down to its one
 * 422; a 413 and an unknown path in the log; live streams that end with their
 * session (sign-out) and their membership (removal).
 */
const ADMIN = "browser-test-admin-token-4567";
const PASSWORD = "a long enough password";
const RATE_LIMIT = 30;
const procs: Proc[] = [];
let browser: Browser;
let server: Proc;
let url: string;
let teamId: number;
let apiKey: string;

type Received = { id: string; body: string; signature: string };
const hook = { status: 200, answer: "ok", received: [] as Received[] };
let receiver: http.Server;
let hookUrl: string;

/** Whether a delivery carries a v1 signature made with `secret` over its body. */
function signedWith(delivery: Received, secret: string): boolean {
  const parts = delivery.signature.split(",").map((part) => part.split("="));
  const t = parts.find(([key]) => key === "t")?.[1];
  const expected = createHmac("sha256", secret).update(`${t}.${delivery.body}`).digest("hex");
  return parts.some(([key, value]) => key === "v1" && value === expected);
}

const flowOf = (delivery: Received) => (JSON.parse(delivery.body) as { flow: string; content: { order?: { external_id: string } } }).flow;
const orderOf = (delivery: Received) => (JSON.parse(delivery.body) as { content: { order?: { external_id: string } } }).content.order?.external_id;

const api = (storeId: number, method: string, pathname: string, body: string, key = apiKey) =>
  fetch(`${url}/api/v1/stores/${storeId}${pathname}`, { method, headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" }, body });
const order = (externalId: string, phone: string) => JSON.stringify({ external_id: externalId, placed_at: "2026-11-20T10:00:00Z", total_price: 12, customer: { phone, first_name: "Ada" } });

/** A member of the team, signed in through the console's own pages, in a context of their own. */
async function member(email: string, width: number): Promise<{ context: BrowserContext; page: Page }> {
  const invitation = await operator(url, ADMIN, "POST", "/admin/v1/invitations", { team_id: teamId, email });
  const context = await browser.newContext({ viewport: { width, height: 800 } });
  const page = await context.newPage();
  await joinByInvitation(page, String(invitation.url), server, PASSWORD);
  return { context, page };
}

describe.runIf(browserAvailable())("delivery and debugging in the console, at 1280 and 390 px", () => {
  explainFailures(() => ({ browser, server }));
  beforeAll(async () => {
    receiver = http.createServer((req, res) => {
      let body = "";
      req.on("data", (chunk: Buffer) => (body += chunk.toString()));
      req.on("end", () => {
        hook.received.push({ id: String(req.headers["x-message-id"]), body, signature: String(req.headers["x-signature"]) });
        res.statusCode = hook.status;
        res.end(hook.answer);
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", () => resolve()));
    hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/messages`;
    server = await startProcess("main.js", {
      DATA_DIR: tempDir(),
      ADMIN_TOKEN: ADMIN,
      SEED_DEMO: "false",
      // The test's receiver is on loopback.
      WEBHOOK_ALLOW_PRIVATE_ADDRESSES: "true",
      // A failing endpoint fails its message within a second or two.
      JOB_MAX_ATTEMPTS: "2",
      JOB_BACKOFF_BASE_MS: "100",
      JOB_BACKOFF_MAX_MS: "200",
      WORKER_POLL_MS: "100",
      RATE_LIMIT_REQUESTS: String(RATE_LIMIT),
      RATE_LIMIT_WINDOW_SECONDS: "60",
    });
    procs.push(server);
    url = server.url ?? "";
    browser = await launch();
    const team = await operator(url, ADMIN, "POST", "/admin/v1/teams", { name: "Delivery" });
    teamId = Number(team.id);
    apiKey = String((await operator(url, ADMIN, "POST", "/admin/v1/keys", { team_id: teamId, name: "shop backend" })).key);
  });
  afterAll(async () => {
    await browser?.close();
    await stopAll(procs);
    await new Promise<void>((resolve) => (receiver ? receiver.close(() => resolve()) : resolve()));
  });

  for (const width of [1280, 390]) {
    it(`at ${width} px`, async () => {
      hook.status = 200;
      hook.answer = "ok";
      const store = await operator(url, ADMIN, "POST", "/admin/v1/stores", { team_id: teamId, name: `Delivery shop ${width}`, country: "US" });
      const storeId = Number(store.id);
      const { context, page } = await member(`owner-${width}@delivery.example`, width);

      // The store's own endpoint: set (its secret shown once), a test event answered, the secret rolled.
      await page.goto(`${url}/stores/${storeId}/activity?tab=delivery`);
      await page.getByText("go to the service's default").waitFor();
      await page.getByLabel("Endpoint URL").fill(hookUrl);
      await page.getByRole("button", { name: "Set endpoint" }).click();
      const secret = await page.getByTestId("endpoint-secret").innerText();
      expect(secret).toMatch(/^whsec_/);
      await page.getByRole("button", { name: "Send test event" }).click();
      await expect.poll(() => page.getByTestId("test-answer").innerText(), { timeout: 15_000 }).toContain("answered 200");
      const event = hook.received.at(-1);
      expect(event && flowOf(event)).toBe("test");
      expect(event && signedWith(event, secret)).toBe(true);
      await page.getByRole("button", { name: "Roll secret" }).click();
      const dialog = page.getByRole("dialog", { name: "Roll the signing secret?" });
      await dialog.getByLabel("The old secret").selectOption("1");
      await dialog.getByRole("button", { name: "Roll secret" }).click();
      const rolled = await page.getByRole("dialog", { name: "New signing secret" }).getByTestId("endpoint-secret").innerText();
      expect(rolled).not.toBe(secret);
      await page.getByRole("dialog", { name: "New signing secret" }).getByRole("button", { name: "Done" }).click();
      // A message now: signed with the new secret (and the old one, while the hour lasts).
      const signed = `signed-${width}`;
      expect((await api(storeId, "POST", "/orders", order(signed, "+12025550161"))).status).toBe(201);
      await expect.poll(() => hook.received.find((delivery) => flowOf(delivery) === "post_purchase" && orderOf(delivery) === signed), { timeout: 15_000 }).toBeTruthy();
      const delivered = hook.received.find((delivery) => flowOf(delivery) === "post_purchase" && orderOf(delivery) === signed);
      expect(delivered && signedWith(delivered, rolled)).toBe(true);
      await page.getByRole("cell", { name: "test event" }).first().waitFor();
      await check(page, "delivery", width);

      // The endpoint fails: the message fails after its attempts, each with the endpoint's answer.
      hook.status = 503;
      hook.answer = "down for maintenance";
      const failing = `failing-${width}`;
      expect((await api(storeId, "POST", "/orders", order(failing, "+12025550162"))).status).toBe(201);
      await page.goto(`${url}/stores/${storeId}/activity?tab=messages&flow=post_purchase&order=${failing}`);
      const item = page.locator("ul.messages > li").first();
      await expect.poll(() => item.locator(".message-head .badge").innerText(), { timeout: 15_000 }).toBe("failed");
      expect(await item.innerText()).toContain("to +12•••62");
      expect(await item.innerText()).not.toContain("2025550162");
      await item.getByText("Content and attempts").click();
      await expect.poll(() => item.getByRole("cell", { name: "down for maintenance" }).count(), { timeout: 15_000 }).toBe(2);
      // It recovers; sent again from the console, the same message gets through.
      hook.status = 200;
      hook.answer = "ok";
      await item.getByRole("button", { name: "Send again" }).click();
      await page.getByRole("dialog", { name: "Send again" }).getByRole("button", { name: "Send again" }).click();
      await item.getByText("Queued to send again.").waitFor();
      await expect.poll(() => item.locator(".message-head .badge").innerText(), { timeout: 15_000 }).toBe("sent");
      const tries = hook.received.filter((delivery) => flowOf(delivery) === "post_purchase" && orderOf(delivery) === failing);
      expect(tries).toHaveLength(3);
      expect(new Set(tries.map((delivery) => delivery.id)).size).toBe(1);
      // Its attempts, still open: the two refused, then the one taken.
      await item.getByRole("cell", { name: "ok", exact: true }).waitFor();
      await check(page, "messages", width);

      // The record's page: as stored, its runs, its messages.
      await item.getByRole("link", { name: new RegExp(`order ${failing}`) }).click();
      await page.waitForURL(`**/stores/${storeId}/records/orders/${failing}`);
      await page.getByRole("heading", { name: "As stored" }).waitFor();
      await page.getByRole("cell", { name: "post_purchase" }).first().waitFor();
      expect(await page.locator("pre").innerText()).toContain(`"external_id": "${failing}"`);
      await check(page, "record", width);

      // A 429 flood with one 422 in it, filtered down to the 422; a 413 and an unknown path, in the log.
      const flood = String((await operator(url, ADMIN, "POST", "/admin/v1/keys", { team_id: teamId, name: `flood ${width}` })).key);
      expect((await api(storeId, "POST", "/customers", JSON.stringify({ external_id: "bad", phone: "12" }), flood)).status).toBe(422);
      // Each its own customer and phone: the only refusals are the limit's 429s (and the one 422 above).
      const answers = await Promise.all(Array.from({ length: RATE_LIMIT + 10 }, (_, i) => api(storeId, "POST", "/customers", JSON.stringify({ external_id: `f${i}`, phone: `+120255502${String(i).padStart(2, "0")}` }), flood)));
      expect(answers.filter((answer) => answer.status === 429).length).toBeGreaterThan(0);
      expect((await api(storeId, "POST", "/orders", JSON.stringify({ note: "x".repeat(1_100_000) }))).status).toBe(413);
      expect((await api(storeId, "POST", "/invoices", "{}")).status).toBe(404);
      expect((await api(storeId, "POST", "/orders", order("x", "+12025550171"), "Unkn0wnKeyOfNoTeamAtAll1")).status).toBe(401);
      await page.goto(`${url}/stores/${storeId}/activity?tab=requests&status=429`);
      await page.getByRole("cell", { name: "429" }).first().waitFor();
      await page.getByLabel("Status").fill("");
      await page.getByLabel("Code").fill("validation_failed");
      await expect.poll(() => page.locator("table.requests").first().locator("tbody tr").count(), { timeout: 15_000 }).toBe(1);
      await page.getByRole("cell", { name: "422" }).waitFor();
      await page.getByLabel("Code").fill("");
      await page.getByLabel("Status").fill("413");
      // Written by the refusal's attribution after the answer; should it not come, the server's own lines say why.
      const explained = async (error: unknown) => {
        const lines = server.output().split("\n").filter((line) => /"level":(40|50)|"status":(413|404)/.test(line)).slice(-20);
        // And what the page showed: its address, any alert, the log's rows.
        const shown = await page.evaluate(() => [location.href, ...[...document.querySelectorAll("[role=alert], table.requests tbody tr")].map((element) => element.textContent ?? "")].join("\n"));
        throw new Error(`${error instanceof Error ? error.message : String(error)}\nthe server's warnings and refusals:\n${lines.join("\n")}\nthe page:\n${shown}`);
      };
      await expect.poll(() => page.locator("table.requests").first().locator("tbody tr").count(), { timeout: 15_000 }).toBe(1).catch(explained);
      await page.getByRole("cell", { name: /payload_too_large|too large/i }).waitFor();
      await page.getByLabel("Status").fill("404");
      await page.getByText(`POST /api/v1/stores/${storeId}/invoices`).waitFor().catch(explained);
      // The unknown key: counted by its first characters, never shown whole.
      await page.getByRole("cell", { name: "Unkn", exact: true }).waitFor();
      expect(await page.content()).not.toContain("Unkn0wnKeyOfNoTeamAtAll1");
      // Two filters changed before the page renders again (the router renders in a transition): both stay.
      await page.evaluate(() => {
        const set = (label: string, value: string) => {
          const input = [...document.querySelectorAll("label")].find((element) => element.textContent?.trim() === label)?.querySelector("input");
          if (!input) throw new Error(`no filter ${label}`);
          Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, "value")?.set?.call(input, value);
          input.dispatchEvent(new Event("input", { bubbles: true }));
        };
        set("Status", "422");
        set("Code", "validation_failed");
      });
      await expect.poll(() => new URL(page.url()).searchParams.toString()).toBe("tab=requests&status=422&code=validation_failed");
      await expect.poll(() => page.locator("table.requests").first().locator("tbody tr").count(), { timeout: 15_000 }).toBe(1).catch(explained);
      await page.getByRole("cell", { name: "422" }).waitFor();

      // A live view ends with its session: signed out from another tab of the same browser.
      const live = await context.newPage();
      await live.goto(`${url}/stores/${storeId}/activity?tab=live`);
      await live.getByText("Live:", { exact: false }).waitFor();
      await page.getByRole("button", { name: "Sign out" }).click();
      await live.getByText("Your session has ended").waitFor({ timeout: 15_000 });
      await context.close();

      // And with a membership: a member removed by the owner.
      const owner = await member(`owner2-${width}@delivery.example`, width);
      const removed = await member(`member-${width}@delivery.example`, width);
      await removed.page.goto(`${url}/stores/${storeId}/activity?tab=live`);
      await removed.page.getByText("Live:", { exact: false }).waitFor();
      await owner.page.goto(`${url}/team`);
      await owner.page.getByRole("button", { name: `Remove member-${width}@delivery.example` }).click();
      await owner.page.getByRole("dialog", { name: "Remove the member" }).getByRole("button", { name: "Remove the member" }).click();
      await removed.page.getByText("Your session has ended").waitFor({ timeout: 15_000 });
      await owner.context.close();
      await removed.context.close();
    });
  }
});
