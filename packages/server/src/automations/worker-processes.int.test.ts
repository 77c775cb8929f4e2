import { afterEach, describe, expect, it, vi } from "vitest";
import { createTestDatabase, onceAcrossDatabases, startTestServer, testDb } from "../../test/helpers.js";
import { operator, startProcess, startReceiver, stopAll, tempDir, type Proc, PROCESS_TEST_TIMEOUT_MS } from "../../test/processes.js";

// Each test starts processes: on a busy machine that takes longer (see PROCESS_START_TIMEOUT_MS).
vi.setConfig({ testTimeout: PROCESS_TEST_TIMEOUT_MS, hookTimeout: PROCESS_TEST_TIMEOUT_MS });

const ADMIN = "process-test-admin-token-0123456789";
const SECRET = "whsec_process_test_0123456789";
const running: Proc[] = [];
const cleanups: Array<() => Promise<void>> = [];

afterEach(async () => {
  await stopAll(running);
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function databaseEnv(): Promise<Record<string, string>> {
  if (testDb === "embedded") return { DATA_DIR: tempDir() };
  const database = await createTestDatabase();
  cleanups.push(() => database.drop());
  return { DATA_DIR: tempDir(), DATABASE_URL: database.url ?? "" };
}

describe.runIf(onceAcrossDatabases)("a worker killed in the middle of a flow", () => {
  it("leaves the job to be retried after its lease, and the message is recorded once with one id", async () => {
    // The first delivery never gets an answer: the worker is inside the flow when it is killed.
    const receiver = await startReceiver((count) => (count === 1 ? undefined : 200));
    cleanups.push(() => receiver.close());
    const env = {
      ...(await databaseEnv()),
      ADMIN_TOKEN: ADMIN,
      SEED_DEMO: "false",
      MESSAGING_WEBHOOK_URL: receiver.url,
      MESSAGING_WEBHOOK_SECRET: SECRET,
      WORKER_POLL_MS: "50",
      JOB_LEASE_SECONDS: "2",
      MESSAGING_WEBHOOK_TIMEOUT_MS: "1500",
      DATABASE_CONNECT_TIMEOUT_MS: "300",
      JOB_BACKOFF_BASE_MS: "100",
    };
    const first = await startProcess("main.js", env);
    running.push(first);
    const url = first.url ?? "";
    const team = await operator(url, ADMIN, "POST", "/admin/v1/teams", { name: "Kill test" });
    const store = await operator(url, ADMIN, "POST", "/admin/v1/stores", { team_id: team.id, name: "Shop", country: "US" });
    const key = await operator(url, ADMIN, "POST", "/admin/v1/keys", { team_id: team.id, name: "k" });
    const push = await fetch(`${url}/api/v1/stores/${store.id}/customers`, {
      method: "POST",
      headers: { Authorization: `Bearer ${key.key}`, "Content-Type": "application/json" },
      body: JSON.stringify({ external_id: "killed-mid-flow", phone: "+14155552671", first_name: "Ada" }),
    });
    expect(push.status).toBe(201);

    await expect.poll(() => receiver.received.length).toBe(1);
    first.child.kill("SIGKILL");
    await first.exited;

    const second = await startProcess("main.js", env);
    running.push(second);
    await expect.poll(() => receiver.received.length).toBe(2);
    expect(receiver.received[1]?.id).toBe(receiver.received[0]?.id);
    expect(JSON.parse(receiver.received[1]?.body ?? "{}")).toMatchObject({ id: receiver.received[0]?.id, flow: "contact_sync" });

    const activity = await operator(second.url ?? "", ADMIN, "GET", `/admin/v1/stores/${store.id}/activity`);
    await expect
      .poll(async () => ((await operator(second.url ?? "", ADMIN, "GET", `/admin/v1/stores/${store.id}/activity`)).runs as Array<{ status: string }>)[0]?.status)
      .toBe("succeeded");
    const after = await operator(second.url ?? "", ADMIN, "GET", `/admin/v1/stores/${store.id}/activity`);
    expect(after.runs).toEqual([expect.objectContaining({ flow: "contact_sync", status: "succeeded", attempts: 2 })]);
    expect(after.messages).toEqual([expect.objectContaining({ id: receiver.received[0]?.id, status: "sent" })]);
    expect(activity.messages).toHaveLength(1);
  });
});

describe.runIf(testDb === "postgres")("two worker processes on one PostgreSQL", () => {
  it("run 500 jobs, each exactly once", async () => {
    const receiver = await startReceiver(() => 200);
    cleanups.push(() => receiver.close());
    const database = await createTestDatabase();
    cleanups.push(() => database.drop());
    // Pushes through the real API, with no worker in this process: the jobs wait for the two below.
    const api = await startTestServer({ database: database.handle });
    cleanups.push(() => api.close());
    const tenant = await api.createTenant();
    for (let batch = 0; batch < 10; batch++) {
      const responses = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          api.request("POST", `/api/v1/stores/${tenant.store.id}/customers`, {
            key: tenant.key,
            body: { external_id: `bulk-${batch * 50 + i}`, phone: `+1415555${String(2000 + batch * 50 + i)}` },
          }),
        ),
      );
      expect(responses.every((res) => res.status === 201)).toBe(true);
    }
    const jobs = () => database.handle.db.selectFrom("automation_jobs").selectAll().execute();
    expect(await jobs()).toHaveLength(500);

    const env = {
      DATABASE_URL: database.url ?? "",
      DATA_DIR: tempDir(),
      MESSAGING_WEBHOOK_URL: receiver.url,
      MESSAGING_WEBHOOK_SECRET: SECRET,
      WORKER_POLL_MS: "20",
      WORKER_CONCURRENCY: "8",
    };
    running.push(await startProcess("worker.js", env), await startProcess("worker.js", env));

    await expect.poll(async () => (await jobs()).filter((job) => job.status === "succeeded").length, { timeout: 60_000, interval: 200 }).toBe(500);
    const finished = await jobs();
    expect(finished.every((job) => job.attempts === 1)).toBe(true);
    expect(new Set(finished.map((job) => job.locked_by)).size).toBe(2);
    const messages = await database.handle.db.selectFrom("messages").select(["id", "status"]).execute();
    expect(messages).toHaveLength(500);
    expect(messages.every((message) => message.status === "sent")).toBe(true);
    expect(receiver.received).toHaveLength(500);
    expect(new Set(receiver.received.map((delivery) => delivery.id)).size).toBe(500);
  });
});
