import fs from "node:fs";
import path from "node:path";
import { chromium, type Browser } from "playwright-core";

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
