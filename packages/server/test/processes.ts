import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";

const serverDir = path.resolve(import.meta.dirname, "..");
export const distFile = (name: string) => path.join(serverDir, "dist", name);

export type Proc = { child: ChildProcess; url: string | undefined; output: () => string; exited: Promise<number | null> };

/**
 * How long a process may take to start before its test gives up: 180 s, or
 * `PROCESS_START_TIMEOUT_MS`. A deadline, not a measure: the embedded
 * database's first start (its files created, then migrated) takes some 10 s of
 * one core alone, 44 s beside eight busy processes on two cores, and longer
 * still on a machine running two suites at once.
 */
export const START_TIMEOUT_MS = Number(process.env.PROCESS_START_TIMEOUT_MS ?? 180_000);

/** How long a test that starts processes may take: three starts' worth, so it scales with `PROCESS_START_TIMEOUT_MS` too. */
export const PROCESS_TEST_TIMEOUT_MS = 3 * START_TIMEOUT_MS;

/** Starts a built entry point as its own process; waits for the server's "listening" line or the worker's "worker started". */
export async function startProcess(entry: "main.js" | "worker.js", env: Record<string, string>): Promise<Proc> {
  const child = spawn(process.execPath, [distFile(entry)], {
    env: { PATH: process.env.PATH ?? "", PORT: "0", LOG_LEVEL: "info", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  const started = Date.now();
  // When each piece of output arrived, for a start that fails: a slow start and a stalled one read differently.
  const arrivals: string[] = [];
  const read = (chunk: Buffer) => {
    out += chunk.toString();
    arrivals.push(`+${Date.now() - started} ms: ${chunk.toString().trimEnd()}`);
  };
  child.stdout?.on("data", read);
  child.stderr?.on("data", read);
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const url = await new Promise<string | undefined>((resolve, reject) => {
    const timer = setTimeout(() => {
      // Never leave a process behind that did not start as expected.
      child.kill("SIGKILL");
      reject(new Error(`${entry} did not start within ${START_TIMEOUT_MS} ms; its output as it arrived:\n${arrivals.join("\n")}`));
    }, START_TIMEOUT_MS);
    const check = () => {
      const listening = /"url":"(http:[^"]+)","database":"\w+"(?:,"worker":\w+)?,"msg":"listening"/.exec(out);
      if (listening?.[1] || (entry === "worker.js" && out.includes('"msg":"worker started"'))) {
        clearTimeout(timer);
        resolve(listening?.[1]);
      }
    };
    child.stdout?.on("data", check);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`${entry} exited with ${code} after ${Date.now() - started} ms:\n${out}`));
    });
  });
  return { child, url, output: () => out, exited };
}

export async function stopAll(procs: Proc[]): Promise<void> {
  for (const proc of procs.splice(0)) {
    if (proc.child.exitCode === null && proc.child.signalCode === null) proc.child.kill("SIGKILL");
    await proc.exited;
  }
}

export function tempDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), "ingest-test-"));
}

export type Delivery = { id: string; body: string; signature: string; at: number };

/** A webhook endpoint on loopback that records every delivery and answers as `respond` says (undefined: never answers). */
export async function startReceiver(respond: (count: number) => number | undefined) {
  const received: Delivery[] = [];
  const hanging: http.ServerResponse[] = [];
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk.toString()));
    req.on("end", () => {
      received.push({ id: String(req.headers["x-message-id"]), body, signature: String(req.headers["x-signature"]), at: Date.now() });
      const status = respond(received.length);
      if (status === undefined) {
        hanging.push(res);
        return;
      }
      res.statusCode = status;
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/messages`,
    received,
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Calls the operator API of a running server. */
export async function operator(url: string, token: string, method: string, pathname: string, body?: unknown) {
  const res = await fetch(url + pathname, {
    method,
    // A connection of its own, as every call of these tests: see processes.test.ts.
    headers: { Authorization: `Bearer ${token}`, Connection: "close", ...(body ? { "Content-Type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return (res.status === 204 ? null : await res.json()) as Record<string, unknown> & { id: number; key: string };
}
