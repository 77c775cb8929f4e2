import { execFile, spawn } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { createTestDatabase, onceAcrossDatabases, testDb } from "./helpers.js";
import { distFile, operator, startProcess, stopAll, tempDir, type Proc, PROCESS_TEST_TIMEOUT_MS, START_TIMEOUT_MS } from "./processes.js";

// Each test starts processes: on a busy machine that takes longer (see PROCESS_START_TIMEOUT_MS).
vi.setConfig({ testTimeout: PROCESS_TEST_TIMEOUT_MS, hookTimeout: PROCESS_TEST_TIMEOUT_MS });

const run = promisify(execFile);
const adminJs = distFile("admin.js");
const running: Proc[] = [];
const startServer = async (env: Record<string, string>) => {
  const proc = await startProcess("main.js", env);
  running.push(proc);
  return { ...proc, url: proc.url ?? "", stdout: proc.output };
};

async function admin(args: string[], env: Record<string, string>) {
  const { stdout } = await run(process.execPath, [adminJs, ...args], { env: { PATH: process.env.PATH ?? "", ...env } });
  return JSON.parse(stdout) as Record<string, unknown> & { data?: Array<Record<string, unknown>> };
}

// Each call on a connection of its own: a kept-alive socket to the process the test kills (or one
// that its server closes for idleness while the test waits for the replacement) would fail the
// next call for a reason that is not the one under test.
async function upsertCustomer(url: string, storeId: unknown, key: unknown, externalId: string) {
  const res = await fetch(`${url}/api/v1/stores/${String(storeId)}/customers`, {
    method: "POST",
    headers: { Authorization: `Bearer ${String(key)}`, "Content-Type": "application/json", Connection: "close" },
    body: JSON.stringify({ external_id: externalId, phone: "+14155552671" }),
  });
  return res.status;
}

afterEach(() => stopAll(running));

describe.runIf(testDb === "embedded")("first start on the embedded database", () => {
  it("seeds demo credentials once, prints a curl line that creates a customer (201, then 200), and writes demo.env", async () => {
    const dataDir = tempDir();
    const first = await startServer({ DATA_DIR: dataDir });
    await expect.poll(() => first.stdout(), { timeout: START_TIMEOUT_MS }).toContain("curl -i -X POST");
    const printed = first.stdout();
    const curl = printed.slice(printed.indexOf("curl -i"), printed.indexOf("'", printed.indexOf("-d '") + 4) + 1);
    for (const expected of ["201 Created", "200 OK"]) {
      const { stdout } = await run("sh", ["-c", curl]);
      expect(stdout.split("\r\n")[0]).toBe(`HTTP/1.1 ${expected}`);
    }
    const demoEnv = fs.readFileSync(path.join(dataDir, "demo.env"), "utf8");
    expect(demoEnv).toMatch(/^BASE_URL=http:\/\/127\.0\.0\.1:\d+\nSTORE_ID=\d+\nAPI_KEY=[A-Za-z0-9]{24}\nCONSOLE_EMAIL=demo@example\.com\nCONSOLE_PASSWORD=[\w-]{16}\n$/);
    expect(printed).toContain(demoEnv.split("\n")[2] ?? "missing");
    // The printed console sign-in works.
    const password = /CONSOLE_PASSWORD=(.+)/.exec(demoEnv)?.[1] ?? "";
    expect(printed).toContain(`Web console: ${first.url}/sign-in  (e-mail demo@example.com, password ${password})`);
    const signIn = await fetch(`${first.url}/console/trpc/session.signIn`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ email: "demo@example.com", password }),
    });
    expect(signIn.status).toBe(200);
    expect(signIn.headers.getSetCookie()[0]).toMatch(/^console_session=/);

    first.child.kill("SIGTERM");
    expect(await first.exited).toBe(0);
    const second = await startServer({ DATA_DIR: dataDir });
    expect(second.stdout()).not.toContain("Demo credentials");
  });

  it("keeps every push it answered through a SIGKILL of its process, pushes in flight as it dies", async () => {
    const dataDir = tempDir();
    const token = "embedded-kill-admin-token-0123456789";
    const first = await startServer({ DATA_DIR: dataDir, SEED_DEMO: "false", ADMIN_TOKEN: token });
    const team = await operator(first.url, token, "POST", "/admin/v1/teams", { name: "Kill" });
    const store = await operator(first.url, token, "POST", "/admin/v1/stores", { team_id: team.id, name: "Kill" });
    const { key } = await operator(first.url, token, "POST", "/admin/v1/keys", { team_id: team.id, name: "k" });
    const answered: string[] = [];
    let stop = false;
    // Three callers pushing one customer after another until the process dies under them.
    const lanes = [0, 1, 2].map(async (lane) => {
      for (let i = 0; !stop; i++) {
        const id = `kill-${lane}-${i}`;
        const status = await upsertCustomer(first.url, store.id, key, id).catch(() => undefined);
        if (status === undefined) return;
        expect(status).toBe(201);
        answered.push(id);
      }
    });
    await expect.poll(() => answered.length, { timeout: START_TIMEOUT_MS }).toBeGreaterThanOrEqual(60);
    first.child.kill("SIGKILL");
    await first.exited;
    stop = true;
    await Promise.all(lanes);

    const second = await startServer({ DATA_DIR: dataDir, SEED_DEMO: "false", ADMIN_TOKEN: token });
    const missing: string[] = [];
    for (const id of answered) {
      const res = await fetch(`${second.url}/api/v1/stores/${String(store.id)}/customers/${id}`, { headers: { Authorization: `Bearer ${key}`, Connection: "close" } });
      if (res.status !== 200 || ((await res.json()) as { external_id?: string }).external_id !== id) missing.push(id);
    }
    expect(missing).toEqual([]);
  });

  it("refuses a second process on the same data directory, and SIGTERM exits 0 and frees it", async () => {
    const dataDir = tempDir();
    const first = await startServer({ DATA_DIR: dataDir, SEED_DEMO: "false" });
    await expect(startServer({ DATA_DIR: dataDir })).rejects.toThrow(/in use by process/);
    first.child.kill("SIGTERM");
    expect(await first.exited).toBe(0);
    expect(fs.existsSync(path.join(dataDir, "server.lock"))).toBe(false);
    const again = await startServer({ DATA_DIR: dataDir, SEED_DEMO: "false" });
    again.child.kill("SIGINT");
    expect(await again.exited).toBe(0);
  });
});

describe.runIf(testDb === "embedded")("logs", () => {
  it("are JSON lines when the output is not a terminal, and readable lines with LOG_FORMAT=pretty", async () => {
    const json = await startServer({ DATA_DIR: tempDir(), SEED_DEMO: "false" });
    const listening = json.stdout().split("\n").find((line) => line.includes("listening")) ?? "";
    expect(JSON.parse(listening)).toMatchObject({ level: 30, msg: "listening", url: json.url });

    const child = spawn(process.execPath, [distFile("main.js")], { env: { PATH: process.env.PATH ?? "", PORT: "0", DATA_DIR: tempDir(), SEED_DEMO: "false", LOG_FORMAT: "pretty" } });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    try {
      await expect.poll(() => out, { timeout: START_TIMEOUT_MS }).toContain("listening");
      const line = out.split("\n").find((text) => text.includes("listening")) ?? "";
      // "[09:30:05.123] INFO: listening {"url":...}", in colour: no JSON object per line.
      const plain = line.replace(new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, "g"), "");
      expect(plain).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: listening .*http:\/\/127\.0\.0\.1:\d+/);
    } finally {
      child.kill("SIGKILL");
    }
  });
});

describe.runIf(testDb === "postgres")("CLUSTER_WORKERS", () => {
  it("runs that many server processes on one port, replaces one that dies, and stops them all on SIGTERM", async () => {
    const database = await createTestDatabase();
    try {
      const cluster = await startServer({ DATA_DIR: tempDir(), DATABASE_URL: database.url ?? "", SEED_DEMO: "false", CLUSTER_WORKERS: "2", ADMIN_TOKEN: "cluster-test-admin-token-0123456789" });
      const children = () => {
        const all = fs.readdirSync("/proc").filter((name) => /^\d+$/.test(name));
        return all.filter((pid) => {
          try {
            return fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ")[1] === String(cluster.child.pid);
          } catch {
            return false;
          }
        });
      };
      await expect.poll(() => children().length, { timeout: START_TIMEOUT_MS }).toBe(2);
      const team = await operator(cluster.url, "cluster-test-admin-token-0123456789", "POST", "/admin/v1/teams", { name: "Cluster" });
      const store = await operator(cluster.url, "cluster-test-admin-token-0123456789", "POST", "/admin/v1/stores", { team_id: team.id, name: "Cluster" });
      const key = await operator(cluster.url, "cluster-test-admin-token-0123456789", "POST", "/admin/v1/keys", { team_id: team.id, name: "k" });
      const statuses = await Promise.all(Array.from({ length: 40 }, (_, i) => upsertCustomer(cluster.url, store.id, key.key, `cluster-${i}`)));
      expect(statuses.every((status) => status === 201)).toBe(true);

      const [first] = children();
      process.kill(Number(first), "SIGKILL");
      await expect.poll(() => children().length === 2 && !children().includes(first ?? ""), { timeout: START_TIMEOUT_MS }).toBe(true);
      expect(await upsertCustomer(cluster.url, store.id, key.key, "cluster-after")).toBe(201);

      cluster.child.kill("SIGTERM");
      expect(await cluster.exited).toBe(0);
      expect(children()).toEqual([]);
    } finally {
      await database.drop();
    }
  });

  it("refuses to start on the embedded database", async () => {
    const failure = await run(process.execPath, [distFile("main.js")], { env: { PATH: process.env.PATH ?? "", DATA_DIR: tempDir(), CLUSTER_WORKERS: "2" } }).catch((error: { code: number; stderr: string; stdout: string }) => error);
    expect(failure).toMatchObject({ code: 1 });
    expect(`${(failure as { stdout: string }).stdout}${(failure as { stderr: string }).stderr}`).toContain("CLUSTER_WORKERS: more than one server process needs PostgreSQL");
  });
});

describe.runIf(onceAcrossDatabases)("graceful shutdown", () => {
  it("SIGTERM stops accepting, lets a request in flight finish, and exits 0", async () => {
    const database = testDb === "postgres" ? await createTestDatabase() : undefined;
    try {
      await shutdownWhileInFlight(database ? { DATA_DIR: tempDir(), DATABASE_URL: database.url ?? "" } : { DATA_DIR: tempDir() });
    } finally {
      await database?.drop();
    }
  });
});

async function shutdownWhileInFlight(env: Record<string, string>) {
  const admin = "shutdown-test-admin-token-0123";
  const server = await startServer({ ...env, SEED_DEMO: "false", ADMIN_TOKEN: admin });
  const team = await operator(server.url, admin, "POST", "/admin/v1/teams", { name: "t" });
  const store = await operator(server.url, admin, "POST", "/admin/v1/stores", { team_id: team.id, name: "s", country: "US" });
  const key = await operator(server.url, admin, "POST", "/admin/v1/keys", { team_id: team.id, name: "k" });

  // Half a body goes out, then the signal, then the rest: the request was in flight when SIGTERM came.
  const body = JSON.stringify({ external_id: "in-flight", phone: "+14155552671" });
  const { port } = new URL(server.url);
  const answer = new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = http.request(
      { host: "127.0.0.1", port, method: "POST", path: `/api/v1/stores/${String(store.id)}/customers`, headers: { Authorization: `Bearer ${String(key.key)}`, "Content-Type": "application/json", "Content-Length": Buffer.byteLength(body) } },
      (res) => {
        let text = "";
        res.on("data", (chunk: Buffer) => (text += chunk.toString()));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on("error", reject);
    req.write(body.slice(0, 10));
    setTimeout(() => {
      server.child.kill("SIGTERM");
      setTimeout(() => req.end(body.slice(10)), 300);
    }, 200);
  });
  const result = await answer;
  expect(result.status).toBe(201);
  expect(JSON.parse(result.text)).toMatchObject({ external_id: "in-flight" });
  expect(await server.exited).toBe(0);
  await expect(fetch(`${server.url}/healthz`)).rejects.toThrow();
}

describe.runIf(onceAcrossDatabases)("the admin command line", () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>> | undefined;
  afterAll(async () => database?.drop());

  it("creates a team, store and key; lists keys without values; a deleted key is refused at once by another server process", async () => {
    const dataDir = tempDir();
    let env: Record<string, string> = { DATA_DIR: dataDir };
    if (testDb === "postgres") {
      database = await createTestDatabase();
      env = { ...env, DATABASE_URL: database.url ?? "" };
    }
    const serverA = await startServer({ ...env, SEED_DEMO: "false" });
    // On PostgreSQL a second process shares the database; the embedded one allows a single process.
    const serverB = testDb === "postgres" ? await startServer({ ...env, SEED_DEMO: "false" }) : serverA;
    const cli = { ...env, ADMIN_URL: serverA.url };

    const team = await admin(["team", "create", "--name", "Acme"], cli);
    expect(team).toMatchObject({ id: expect.any(Number), name: "Acme" });
    const store = await admin(["store", "create", "--team", String(team.id), "--name", "Acme EU", "--country", "de", "--recovery-delay", "0"], cli);
    expect(store).toMatchObject({ team_id: team.id, name: "Acme EU", country: "DE", recovery_delay_seconds: 0, paused: false });
    const key = await admin(["key", "create", "--team", String(team.id), "--name", "backend"], cli);
    expect(key.key).toMatch(/^[A-Za-z0-9]{24}$/);
    expect(key.last4).toBe(String(key.key).slice(-4));

    const listed = await admin(["key", "list", "--team", String(team.id)], cli);
    expect(listed.data).toHaveLength(1);
    expect(JSON.stringify(listed)).not.toContain(String(key.key));

    expect(await upsertCustomer(serverB.url, store.id, key.key, "cli-1")).toBe(201);
    // Activity: a table for people by default, JSON with --json.
    const table = await run(process.execPath, [adminJs, "activity", "--store", String(store.id)], { env: { PATH: process.env.PATH ?? "", ...cli } });
    const lines = table.stdout.split("\n");
    expect(lines[0]).toBe("Automation runs (1)");
    expect(lines[1]).toMatch(/^RUN +FLOW +RECORD +STATUS +TRIES +DUE +FINISHED +ERROR$/);
    expect(lines[3]).toMatch(/^\d+ +contact_sync +customer cli-1 +(pending|running|succeeded) +\d +\d{4}-\d\d-\d\d \d\d:\d\d:\d\d/);
    expect(table.stdout).toMatch(/\nMessages \(\d\)\nMESSAGE +RUN +FLOW +TO +STATUS +PROVIDER +SENT\n/);
    const json = await admin(["activity", "--store", String(store.id), "--json"], cli);
    expect(json.runs).toEqual([expect.objectContaining({ flow: "contact_sync", record_type: "customer", record_external_id: "cli-1" })]);
    await admin(["store", "pause", String(store.id)], cli);
    expect(await upsertCustomer(serverB.url, store.id, key.key, "cli-1")).toBe(404);
    await admin(["store", "resume", String(store.id)], cli);
    expect(await upsertCustomer(serverB.url, store.id, key.key, "cli-1")).toBe(200);

    expect(await admin(["key", "delete", String(key.id)], cli)).toEqual({ ok: true });
    expect(await upsertCustomer(serverB.url, store.id, key.key, "cli-1")).toBe(401);
    expect((await admin(["key", "list", "--team", String(team.id)], cli)).data).toHaveLength(0);
  });

  it.runIf(testDb === "postgres")("a key deleted or a store paused through one process is refused at once by another whose cache is warm", async () => {
    database ??= await createTestDatabase();
    const env = { DATA_DIR: tempDir(), DATABASE_URL: database.url ?? "", ADMIN_TOKEN: "cache-test-admin-token-0123456789" };
    const [serverA, serverB] = [await startServer({ ...env, SEED_DEMO: "false" }), await startServer({ ...env, SEED_DEMO: "false" })];
    const cacheHits = async () => {
      const metrics = await (await fetch(`${serverB.url}/metrics`, { headers: { Authorization: `Bearer ${env.ADMIN_TOKEN}` } })).text();
      return Number(/access_cache_lookups_total\{result="hit"\} (\d+)/.exec(metrics)?.[1] ?? 0);
    };
    const team = await operator(serverA.url, env.ADMIN_TOKEN, "POST", "/admin/v1/teams", { name: "Cache" });
    const store = await operator(serverA.url, env.ADMIN_TOKEN, "POST", "/admin/v1/stores", { team_id: team.id, name: "Cached" });
    for (let round = 0; round < 10; round++) {
      const key = await operator(serverA.url, env.ADMIN_TOKEN, "POST", "/admin/v1/keys", { team_id: team.id, name: `k${round}` });
      const before = await cacheHits();
      for (let i = 0; i < 3; i++) expect(await upsertCustomer(serverB.url, store.id, key.key, "warm")).toBeLessThan(300);
      expect(await cacheHits()).toBeGreaterThanOrEqual(before + 2);
      await operator(serverA.url, env.ADMIN_TOKEN, "DELETE", `/admin/v1/keys/${String(key.id)}`);
      expect(await upsertCustomer(serverB.url, store.id, key.key, "warm")).toBe(401);
    }
    const key = await operator(serverA.url, env.ADMIN_TOKEN, "POST", "/admin/v1/keys", { team_id: team.id, name: "pause" });
    expect(await upsertCustomer(serverB.url, store.id, key.key, "warm")).toBe(200);
    await operator(serverA.url, env.ADMIN_TOKEN, "PATCH", `/admin/v1/stores/${String(store.id)}`, { paused: true });
    expect(await upsertCustomer(serverB.url, store.id, key.key, "warm")).toBe(404);
  });

  it("exits 2 with usage on a bad command, and 1 with the API's message on a refused call", async () => {
    await expect(run(process.execPath, [adminJs, "team", "explode"], { env: { PATH: process.env.PATH ?? "" } })).rejects.toMatchObject({ code: 2 });
    const dataDir = tempDir();
    const env: Record<string, string> = testDb === "postgres" ? { DATA_DIR: dataDir, DATABASE_URL: (database ??= await createTestDatabase()).url ?? "" } : { DATA_DIR: dataDir };
    const server = await startServer({ ...env, SEED_DEMO: "false" });
    const failure = await run(process.execPath, [adminJs, "key", "create", "--team", "999999", "--name", "x"], {
      env: { PATH: process.env.PATH ?? "", ...env, ADMIN_URL: server.url },
    }).catch((error: { code: number; stderr: string }) => error);
    expect(failure).toMatchObject({ code: 1, stderr: expect.stringContaining("Team not found") });
  });
});
