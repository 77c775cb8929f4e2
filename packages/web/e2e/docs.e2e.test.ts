import path from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { operator, startProcess, stopAll, tempDir, type Proc, PROCESS_TEST_TIMEOUT_MS } from "../../server/test/processes.js";
import { ARTIFACTS, browserAvailable, launch } from "./browser.js";

// Each test starts processes: on a busy machine that takes longer (see PROCESS_START_TIMEOUT_MS).
vi.setConfig({ testTimeout: PROCESS_TEST_TIMEOUT_MS, hookTimeout: PROCESS_TEST_TIMEOUT_MS });

const ADMIN = "docs-test-admin-token-0123456789";
const procs: Proc[] = [];
let browser: Browser;
let url: string;

type Activity = { runs: Array<{ flow: string; record_external_id: string; status: string }>; messages: Array<{ flow: string; to_phone: string | null; status: string }> };

describe.runIf(browserAvailable())("the API reference at /docs in Chromium", () => {
  beforeAll(async () => {
    const server = await startProcess("main.js", { DATA_DIR: tempDir(), ADMIN_TOKEN: ADMIN, SEED_DEMO: "false" });
    procs.push(server);
    url = server.url ?? "";
    browser = await launch();
  });
  afterAll(async () => {
    await browser?.close();
    await stopAll(procs);
  });

  it("Try it out on POST orders with the pre-filled example answers 201, and its post-purchase message is sent", async () => {
    const team = await operator(url, ADMIN, "POST", "/admin/v1/teams", { name: "Docs" });
    const store = await operator(url, ADMIN, "POST", "/admin/v1/stores", { team_id: team.id, name: "Docs shop", country: "US" });
    const key = await operator(url, ADMIN, "POST", "/admin/v1/keys", { team_id: team.id, name: "docs" });

    const page = await browser.newPage();
    await page.goto(`${url}/docs`);
    // The front page comes first, its examples naming the address the page was opened at.
    await expect.poll(() => page.getByRole("heading", { name: "First request" }).isVisible()).toBe(true);
    expect(await page.locator(".information-container").textContent()).toContain(`export BASE_URL=${url}`);

    await page.locator("button.authorize").first().click();
    const dialog = page.locator(".modal-ux");
    await dialog.locator(".auth-container input").first().fill(String(key.key));
    await dialog.locator(".auth-btn-wrapper button.authorize").click();
    await dialog.locator("button.close-modal").click();

    const operation = page.locator(".opblock-post").filter({ has: page.locator('[data-path="/api/v1/stores/{store_id}/orders"]') });
    await operation.locator(".opblock-summary").first().click();
    // "Try it out" is off until clicked: a reader's first click opens the form, never closes it.
    await expect.poll(() => operation.getByRole("button", { name: "Try it out" }).isVisible()).toBe(true);
    await operation.getByRole("button", { name: "Try it out" }).click();
    await expect.poll(() => operation.getByRole("button", { name: "Cancel" }).isVisible()).toBe(true);
    // Nothing to type but the store: the body is the document's working example, and no X-Backfill is pre-filled.
    await operation.locator('input[placeholder="store_id"]').fill(String(store.id));
    expect(await operation.locator('input[placeholder="X-Backfill"]').inputValue()).toBe("");
    expect(await operation.locator("textarea.body-param__text").inputValue()).toContain('"external_id": "1001"');
    await operation.getByRole("button", { name: "Execute" }).click();

    const status = operation.locator(".live-responses-table .response .response-col_status").first();
    await expect.poll(() => status.textContent()).toMatch(/^\s*201/);
    await page.screenshot({ path: path.join(ARTIFACTS, "docs-try-it-out.png"), fullPage: false });

    // The push was live: the order's post-purchase ran and its message went to the customer's phone.
    await expect
      .poll(async () => {
        const activity = (await operator(url, ADMIN, "GET", `/admin/v1/stores/${String(store.id)}/activity`)) as unknown as Activity;
        const run = activity.runs.find((r) => r.flow === "post_purchase" && r.record_external_id === "1001");
        const message = activity.messages.find((m) => m.flow === "post_purchase");
        return { run: run?.status, to: message?.to_phone };
      }, { timeout: 15_000 })
      .toEqual({ run: "succeeded", to: "+14155552671" });
  });
});
