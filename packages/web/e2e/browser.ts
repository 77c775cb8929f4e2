import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterEach, expect } from "vitest";
import type { Proc } from "../../server/test/processes.js";

/** Debian's Chromium; Playwright's own download cannot work on the project's machines. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/**
 * Whether the browser tests can run here. Without a browser they are skipped,
 * and say so loudly; under CI a missing browser fails the run instead.
 */
export function browserAvailable(): boolean {
  if (fs.existsSync(CHROMIUM)) return true;
  const why = `no Chromium at ${CHROMIUM} (install it: apt-get install -y chromium, or set CHROMIUM_PATH)`;
  if (process.env.CI) throw new Error(`Browser tests cannot run: ${why}`);
  console.warn(`\n*** BROWSER TESTS SKIPPED: ${why} ***\n`);
  return false;
}

export function launch(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
}

/** Where screenshots go: test artifacts, kept out of git. */
export const ARTIFACTS = path.resolve(import.meta.dirname, "artifacts");
fs.mkdirSync(ARTIFACTS, { recursive: true });

/** Where the console's screenshots go: docs/console/ (the README shows them). */
export const SHOTS = path.resolve(import.meta.dirname, "../../../docs/console");
const AXE = fs.readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

type Violation = { id: string; impact: string | null; nodes: Array<{ target: string[] }> };

/**
 * A page as a reader gets it: settled, nothing scrolling sideways, no serious or critical axe-core violation;
 * its screenshot saved as `<name>-<width>.png`.
 */
export async function check(page: Page, name: string, width: number) {
  // Let the page settle: its queries answered, nothing still loading.
  await page.waitForLoadState("networkidle");
  await expect.poll(() => page.locator(".loading").count()).toBe(0);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  expect(overflow, `${name} at ${width} px scrolls sideways by ${overflow} px`).toBeLessThanOrEqual(0);
  // Evaluated through the browser's protocol: the console's policy allows no inline script.
  await page.evaluate(AXE);
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (context: Document) => Promise<{ violations: Violation[] }> } }).axe;
    return (await axe.run(document)).violations.map(({ id, impact, nodes }) => ({ id, impact, nodes: nodes.map((node) => ({ target: node.target })) }));
  });
  const serious = violations.filter((violation) => violation.impact === "serious" || violation.impact === "critical");
  expect(serious, `${name} at ${width} px: ${JSON.stringify(serious)}`).toEqual([]);
  await page.screenshot({ path: path.join(SHOTS, `${name}-${width}.png`), fullPage: width < 500 });
}


/** The last link a server with no mail sender wrote to its log for `to` (its mails go there), matching `path`. */
export function linkFromLog(server: Proc, to: string, path: string): string | undefined {
  const lines = server.output().split("\n").filter((line) => line.includes("mail not sent") && line.includes(`"to":"${to}"`));
  return lines.at(-1)?.match(new RegExp(`https?://[^\\s"\\\\]+/${path}/[A-Za-z0-9_-]+`))?.[0];
}

/**
 * Accepts an invitation as a new person does: the password chosen on its
 * page, then the link mailed to the invitation's e-mail opened (here read from
 * the server's log: it has no mail sender), which signs in.
 */
export async function joinByInvitation(page: Page, link: string, server: Proc, password: string): Promise<void> {
  await page.goto(link);
  const email = await page.locator("main p strong").first().innerText();
  await page.getByLabel("Password", { exact: true }).fill(password);
  await page.getByLabel("Repeat the password").fill(password);
  await page.getByRole("button", { name: "Choose this password" }).click();
  await page.getByRole("heading", { name: "Check your e-mail" }).waitFor();
  // The log line arrives through the server's output a moment after the answer (polled: this also runs in hooks).
  const until = Date.now() + 10_000;
  while (linkFromLog(server, email, "verify") === undefined && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 25));
  const verify = linkFromLog(server, email, "verify");
  if (verify === undefined) throw new Error(`no verification link for ${email} in the server's log`);
  await page.goto(verify);
  await page.getByRole("button", { name: "Confirm and sign in" }).click();
  await page.waitForURL("**/settings/api-keys");
}

/**
 * Registered in a suite: after each of its tests that failed, every page still open in its browser is saved as
 * `artifacts/failed-<test>-<n>.png`, its address and visible text printed, with the end of its server's output,
 * so that a failure says what the pages showed and what the server logged, not only what was missing.
 */
export function explainFailures(suite: () => { browser: Browser | undefined; server: Proc | undefined }): void {
  afterEach(async ({ task }) => {
    if (task.result?.state !== "fail") return;
    const { browser, server } = suite();
    const name = task.name.replace(/[^A-Za-z0-9]+/g, "-");
    const pages = browser?.contexts().flatMap((context) => context.pages()) ?? [];
    for (const [n, page] of pages.entries()) {
      const file = path.join(ARTIFACTS, `failed-${name}-${n}.png`);
      const text = await page
        .screenshot({ path: file, fullPage: true, timeout: 5_000 })
        .then(() => page.locator("body").innerText({ timeout: 5_000 }))
        .catch((error: unknown) => `(not readable: ${String(error)})`);
      console.error(`page ${n} at ${page.url()} (${file}):\n${text.slice(0, 2_000)}`);
    }
    if (server) console.error(`the server's last output:\n${server.output().slice(-8_000)}`);
  });
}
