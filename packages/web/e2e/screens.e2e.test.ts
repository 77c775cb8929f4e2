import fs from "node:fs";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { operator, startProcess, stopAll, tempDir, type Proc, PROCESS_TEST_TIMEOUT_MS } from "../../server/test/processes.js";
import { browserAvailable, check, joinByInvitation, launch, SHOTS } from "./browser.js";

// Each test starts processes: on a busy machine that takes longer (see PROCESS_START_TIMEOUT_MS).
vi.setConfig({ testTimeout: PROCESS_TEST_TIMEOUT_MS, hookTimeout: PROCESS_TEST_TIMEOUT_MS });

/**
 * Every page of the console at a desktop's width and a phone's: nothing
 * scrolls sideways, axe-core finds no serious or critical violation, and a
 * screenshot of each goes to docs/console/ (the README shows them).
 */
const ADMIN = "browser-test-admin-token-0123";
const PASSWORD = "a long enough password";
const procs: Proc[] = [];
let browser: Browser;
let url: string;
let storeId: number;
let inviteUrl: string;
let apiKey: string;

async function signedIn(context: BrowserContext): Promise<Page> {
  const page = await context.newPage();
  await page.goto(`${url}/sign-in`);
  await page.getByLabel("E-mail").fill("owner@screens.example");
  await page.getByLabel("Password").fill(PASSWORD);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL("**/settings/api-keys");
  return page;
}

describe.runIf(browserAvailable())("every console page, at 1280 and 390 px", () => {
  beforeAll(async () => {
    fs.mkdirSync(SHOTS, { recursive: true });
    const server = await startProcess("main.js", { DATA_DIR: tempDir(), ADMIN_TOKEN: ADMIN, SEED_DEMO: "false" });
    procs.push(server);
    url = server.url ?? "";
    browser = await launch();
    const team = await operator(url, ADMIN, "POST", "/admin/v1/teams", { name: "Screens" });
    const store = await operator(url, ADMIN, "POST", "/admin/v1/stores", { team_id: team.id, name: "Screens shop", country: "US" });
    storeId = Number(store.id);
    const key = await operator(url, ADMIN, "POST", "/admin/v1/keys", { team_id: team.id, name: "shop backend" });
    apiKey = String(key.key);
    // Some of everything: an order (its automations), a refused push (the request log), an import with a refused line.
    const api = (method: string, pathname: string, body: string, type = "application/json") =>
      fetch(`${url}/api/v1/stores/${storeId}${pathname}`, { method, headers: { Authorization: `Bearer ${String(key.key)}`, "Content-Type": type }, body });
    await api("POST", "/orders", JSON.stringify({ external_id: "1001", placed_at: "2026-11-20T10:00:00Z", total_price: 42, customer: { phone: "+12025550143", first_name: "Ada" } }));
    await api("POST", "/orders", JSON.stringify({ external_id: "1002", placed_at: "yesterday", total_price: -1, customer: { phone: "+12025550146", email: "bo@example.com" } }));
    await api("POST", "/imports?kind=customers", '{"external_id":"c-1","phone":"+12025550144"}\n{"external_id":"c-2","phone":"12"}\n', "application/x-ndjson");
    const first = await operator(url, ADMIN, "POST", "/admin/v1/invitations", { team_id: team.id, email: "owner@screens.example" });
    const page = await browser.newPage();
    await joinByInvitation(page, String(first.url), server, PASSWORD);
    // A pending invitation, for the Team page and the invitation page.
    const invited = await page.evaluate(async () => {
      const response = await fetch("/console/trpc/team.invite", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ email: "new@screens.example" }) });
      return ((await response.json()) as { result: { data: { url: string } } }).result.data.url;
    });
    inviteUrl = invited;
    await page.close();
  });
  afterAll(async () => {
    await browser?.close();
    await stopAll(procs);
  });

  for (const width of [1280, 390]) {
    it(`at ${width} px`, async () => {
      const outside = await browser.newContext({ viewport: { width, height: 800 } });
      const signInPage = await outside.newPage();
      await signInPage.goto(`${url}/sign-in`);
      await check(signInPage, "sign-in", width);
      await signInPage.goto(inviteUrl);
      await expect.poll(() => signInPage.getByRole("heading", { name: /Join/ }).isVisible()).toBe(true);
      await check(signInPage, "invitation", width);
      await outside.close();

      const context = await browser.newContext({ viewport: { width, height: 800 } });
      const page = await signedIn(context);
      const pages: Array<[string, string, () => Promise<unknown>]> = [
        ["api-keys", "/settings/api-keys", () => page.getByRole("row", { name: /shop backend/ }).waitFor()],
        [
          "stores",
          "/stores",
          async () => {
            await page.getByText("Screens shop").waitFor();
            expect(await page.title()).toBe("Stores · Commerce Ingest");
            // Pausing (every push then answers 404) asks first, in the console's own dialog; cancelled, nothing changes.
            await page.getByRole("button", { name: `Pause store ${storeId}` }).click();
            const dialog = page.getByRole("dialog", { name: "Pause the store" });
            await dialog.getByText("every push to it is answered 404").waitFor();
            await dialog.getByRole("button", { name: "Cancel" }).click();
            expect(await page.locator(".badge.paused").count()).toBe(0);
          },
        ],
        [
          "overview",
          `/stores/${storeId}/activity`,
          async () => {
            await page.getByRole("img", { name: /Records written, by kind.*orders [1-9]/ }).waitFor();
            // The store by its name, in the heading and the tab's title; the legend's totals shown before any hover.
            await page.getByRole("heading", { name: `Screens shop (store ${storeId}): activity` }).waitFor();
            expect(await page.title()).toBe(`Overview · Screens shop (store ${storeId}) · Commerce Ingest`);
            expect(await page.locator(".u-legend").first().innerText()).not.toContain("--");
          },
        ],
        [
          "live",
          `/stores/${storeId}/activity?tab=live`,
          async () => {
            await page.getByText("Live:", { exact: false }).waitFor();
            // A push made while the view is open shows in it within a second; opened, it shows the record as stored and its runs.
            const id = `live-${width}`;
            const pushed = await fetch(`${url}/api/v1/stores/${storeId}/orders`, {
              method: "POST",
              headers: { Authorization: `Bearer ${apiKey}`, "Content-Type": "application/json" },
              body: JSON.stringify({ external_id: id, placed_at: "2026-11-20T10:00:00Z", total_price: 7, customer: { phone: "+12025550145" } }),
            });
            expect(pushed.status).toBe(201);
            const row = page.getByRole("button", { name: new RegExp(`201 POST /api/v1/stores/\\{store_id\\}/orders ${id}`) });
            await row.waitFor();
            await row.click();
            // Its request body as sent, and the record as stored now.
            await page.getByLabel("Request body").getByText(`"external_id": "${id}"`).waitFor();
            await page.getByRole("heading", { name: new RegExp(`orders ${id}, as stored now`) }).waitFor();
            await row.click();
            const push = (body: Record<string, unknown>) =>
              fetch(`${url}/api/v1/stores/${storeId}/orders`, { method: "POST", headers: { Authorization: `Bearer ${apiKey}`, "Content-Type": "application/json" }, body: JSON.stringify(body) });
            // Paused, a new call is held back (and counted); resumed, it shows.
            await page.getByRole("button", { name: "Pause" }).click();
            const held = `held-${width}`;
            expect((await push({ external_id: held, placed_at: "2026-11-20T10:00:00Z", total_price: 3, customer: { phone: "+12025550147" } })).status).toBe(201);
            await page.getByText("Paused: 1 new call held back.").waitFor();
            expect(await page.getByRole("button", { name: new RegExp(held) }).count()).toBe(0);
            await page.getByRole("button", { name: "Resume" }).click();
            await page.getByRole("button", { name: new RegExp(`201 POST /api/v1/stores/\\{store_id\\}/orders ${held}`) }).waitFor();
            // Filtered to 422: a refused push shows, the 201s do not.
            await page.getByLabel("Status").fill("422");
            expect((await push({ external_id: `refused-${width}`, placed_at: "2026-11-20T10:00:00Z", total_price: -1 })).status).toBe(422);
            await page.getByRole("button", { name: /^422 POST/ }).first().waitFor();
            expect(await page.getByRole("button", { name: /^201 POST/ }).count()).toBe(0);
            await page.getByLabel("Status").fill("");
          },
        ],
        ["automations", `/stores/${storeId}/activity?tab=automations`, () => page.getByRole("cell", { name: "post_purchase" }).first().waitFor()],
        // A filter is in the address too: this link opens the log showing the refused calls only.
        [
          "request-log",
          `/stores/${storeId}/activity?tab=requests&status=4xx`,
          async () => {
            await page.getByRole("cell", { name: "422" }).first().waitFor();
            expect(await page.getByLabel("Status").inputValue()).toBe("4xx");
            expect(await page.getByRole("cell", { name: "201" }).count()).toBe(0);
            // Status and error in view, at a phone's width too, without scrolling sideways.
            for (const cell of [page.getByRole("cell", { name: "422" }).first(), page.getByRole("cell", { name: /validation_failed/ }).first()]) {
              const box = await cell.boundingBox();
              expect(box && box.x + box.width).toBeLessThanOrEqual(width);
            }
          },
        ],
        // A refused call opened at its own address: its real path, code, details and bodies, the phone and e-mail masked.
        [
          "request",
          `/stores/${storeId}/activity?tab=requests&code=validation_failed&external_id=1002`,
          async () => {
            await page.locator("table.requests tbody a").first().click();
            await page.waitForURL(`**/stores/${storeId}/requests/*`);
            await page.getByRole("heading", { name: "Request body" }).waitFor();
            const text = await page.locator(".detail").innerText();
            expect(text).toContain(`POST /api/v1/stores/${storeId}/orders`);
            expect(text).toContain("validation_failed");
            expect(text).toMatch(/total_price/);
            expect(text).toContain('"phone": "+12•••46"');
            expect(text).toContain('"email": "b•••@example.com"');
            expect(text).not.toMatch(/2025550146|bo@example/);
          },
        ],
        ["imports", `/stores/${storeId}/activity?tab=imports`, () => page.getByRole("cell", { name: "succeeded" }).first().waitFor()],
        ["team", "/team", () => page.getByText("new@screens.example").waitFor()],
        ["audit", "/audit", () => page.getByRole("cell", { name: "member.invited" }).first().waitFor()],
        ["not-found", "/no/such/page", () => page.getByRole("heading", { name: "Page not found" }).waitFor()],
      ];
      for (const [name, pathname, ready] of pages) {
        await page.goto(`${url}${pathname}`);
        await ready();
        await check(page, name, width);
      }
      await context.close();
    });
  }
});
