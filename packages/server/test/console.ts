import { createTRPCClient, httpLink, TRPCClientError } from "@trpc/client";
import type { ConsoleRouter } from "../src/api/console/console.router.js";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll } from "vitest";
import { ADMIN_TOKEN, startTestServer, type TestServer } from "./helpers.js";

/**
 * A browser's view of the console: tRPC's own client over HTTP, with a cookie
 * jar (one session cookie) and the Origin header a browser would send.
 */
export function consoleBrowser(server: TestServer, origin: string = server.url, userAgent?: string) {
  const jar = new Map<string, string>();
  const setCookies: string[] = [];
  const fetchWithCookies: typeof fetch = async (input, init = {}) => {
    const headers = new Headers(init.headers);
    headers.set("Origin", origin);
    if (userAgent) headers.set("User-Agent", userAgent);
    if (jar.size > 0) headers.set("Cookie", [...jar].map(([name, value]) => `${name}=${value}`).join("; "));
    const response = await fetch(input, { ...init, headers });
    for (const line of response.headers.getSetCookie()) {
      setCookies.push(line);
      const [pair = ""] = line.split(";");
      const [name = "", value = ""] = pair.split("=");
      if (/expires=Thu, 01 Jan 1970/i.test(line) || value === "") jar.delete(name);
      else jar.set(name, value);
    }
    return response;
  };
  const client = createTRPCClient<ConsoleRouter>({ links: [httpLink({ url: `${server.url}/console/trpc`, fetch: fetchWithCookies })] });
  /** The session cookie as the browser would send it with any request (the live view's stream, say). */
  const cookieHeader = () => [...jar].map(([name, value]) => `${name}=${value}`).join("; ");
  return { client, jar, setCookies, cookieHeader };
}

/** An invitation made through the operator API, as `pnpm admin member invite` does. */
export async function invite(server: TestServer, teamId: number, email: string): Promise<{ url: string; token: string }> {
  const res = await server.request("POST", "/admin/v1/invitations", { key: ADMIN_TOKEN, body: { team_id: teamId, email } });
  if (res.status !== 201) throw new Error(`invitation answered ${res.status}: ${res.text}`);
  const url = String(res.body.url);
  return { url, token: url.split("/invite/")[1] ?? "" };
}

type Failure = { code: string; message: string; httpStatus: number; errorCode: string | null; details: Array<{ path: string; message: string }> | null };

/** The tRPC error code, message and status a call failed with, with the contract's code and the refused fields. */
export async function failure(call: Promise<unknown>): Promise<Failure> {
  try {
    await call;
  } catch (error) {
    if (error instanceof TRPCClientError) {
      const data = error.data as Omit<Failure, "message">;
      return { code: data.code, message: error.message, httpStatus: data.httpStatus, errorCode: data.errorCode, details: data.details };
    }
    throw error;
  }
  throw new Error("the call succeeded");
}

/**
 * The console tests' shared setup: one server serving a console build of its
 * own (an index page and a hashed asset), sign-ins throttled at 3 an e-mail.
 * A test file calls `withConsoleServer()` once; the bindings below are its own.
 */
export let server: TestServer;
export let consoleDir: string;
export const PASSWORD = "a long enough password";

export function withConsoleServer(): void {
  beforeAll(async () => {
    consoleDir = fs.mkdtempSync(path.join(os.tmpdir(), "console-"));
    fs.mkdirSync(path.join(consoleDir, "assets"));
    fs.writeFileSync(path.join(consoleDir, "index.html"), "<!doctype html><title>Console</title><div id=root></div>");
    fs.writeFileSync(path.join(consoleDir, "assets", "app-1a2b3c.js"), "console.log('app');\n".repeat(200));
    server = await startTestServer({ consoleDir, signInLimits: { perEmail: 3, perAddress: 1000, windowSeconds: 60 } });
  });
  afterAll(async () => {
    await server?.close();
    fs.rmSync(consoleDir, { recursive: true, force: true });
  });
}

let seq = 0;
export const uniqueEmail = (name: string) => `${name}.${Date.now()}.${++seq}@example.com`;

/**
 * An invitation accepted as a person does: a password chosen on its link,
 * then the link mailed to the invitation's e-mail opened (which signs in).
 */
export async function joinByInvitation(on: TestServer, browser: ReturnType<typeof consoleBrowser>, token: string, password = PASSWORD): Promise<void> {
  const { email } = await browser.client.invitation.get.query({ token });
  const before = on.mails.length;
  await browser.client.invitation.accept.mutate({ token, password });
  const link = await expectMail(on, email, /\/verify\/([A-Za-z0-9_-]+)/, before);
  await browser.client.invitation.verify.mutate({ token: link });
}

/** The first capture of `pattern` in a mail to `to` sent after the `after`th, once it has been sent. */
export async function expectMail(on: TestServer, to: string, pattern: RegExp, after = 0): Promise<string> {
  const found = () => on.mails.slice(after).find((mail) => mail.to === to && pattern.test(mail.text))?.text.match(pattern)?.[1];
  for (let tries = 0; tries < 200 && found() === undefined; tries++) await new Promise((resolve) => setImmediate(resolve));
  const value = found();
  if (value === undefined) throw new Error(`no mail to ${to} matching ${String(pattern)}`);
  return value;
}

/** A tenant with a signed-in member. */
export async function signedInTenant() {
  const tenant = await server.createTenant();
  const email = uniqueEmail("owner");
  const { token } = await invite(server, tenant.team.id, email);
  const browser = consoleBrowser(server);
  await joinByInvitation(server, browser, token);
  return { ...tenant, email, browser };
}

/** Reads a live stream to its end (the server ends it), answering what it sent. */
export async function readToEnd(stream: Response): Promise<string> {
  const reader = stream.body?.getReader();
  let text = "";
  for (;;) {
    const chunk = await reader?.read();
    if (!chunk || chunk.done) return text;
    text += new TextDecoder().decode(chunk.value);
  }
}
