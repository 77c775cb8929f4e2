import { gzipSync } from "node:zlib";
import { LIMITS } from "@commerce-ingest/shared";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { claimChunk, startQueued } from "./import.repository.js";
import { startImportRunner } from "./runner.js";
import { createLogger } from "../logger.js";
import { startTestServer, type TestServer } from "../../test/helpers.js";

let server: TestServer;
let idle: TestServer;

beforeAll(async () => {
  server = await startTestServer({ imports: { leaseSeconds: 2 }, bodyLimitBytes: 64 * 1024 });
  // No import runner: what it receives stays queued.
  idle = await startTestServer({ imports: { concurrency: 0, uploadLimitBytes: 512 * 1024 } });
});
afterAll(async () => {
  await server?.close();
  await idle?.close();
});

type Tenant = Awaited<ReturnType<TestServer["createTenant"]>>;

const ndjson = (records: unknown[]) => records.map((record) => (typeof record === "string" ? record : JSON.stringify(record))).join("\n") + "\n";

async function upload(on: TestServer, tenant: Tenant, kind: string, body: string | Buffer, headers: Record<string, string> = {}) {
  const response = await fetch(`${on.url}/api/v1/stores/${tenant.store.id}/imports?kind=${kind}`, {
    method: "POST",
    headers: { Authorization: `Bearer ${tenant.key}`, "Content-Type": "application/x-ndjson", ...headers },
    body,
  });
  return { status: response.status, headers: response.headers, body: (await response.json()) as Record<string, unknown> & { id: number } };
}

async function finished(on: TestServer, tenant: Tenant, id: number) {
  const deadline = Date.now() + 150_000;
  while (Date.now() < deadline) {
    const res = await on.request("GET", `/api/v1/stores/${tenant.store.id}/imports/${id}`, { key: tenant.key });
    if (["succeeded", "failed", "cancelled"].includes(String(res.body.status))) return res.body as Record<string, unknown>;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error("the import did not finish");
}

async function errorsOf(on: TestServer, tenant: Tenant, id: number) {
  const res = await fetch(`${on.url}/api/v1/stores/${tenant.store.id}/imports/${id}/errors`, { headers: { Authorization: `Bearer ${tenant.key}` } });
  expect(res.headers.get("content-type")).toMatch(/^application\/x-ndjson/);
  return (await res.text()).split("\n").filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>);
}

async function readAll(on: TestServer, tenant: Tenant, resource: string) {
  const records: Array<Record<string, unknown>> = [];
  let cursor: string | null = null;
  do {
    const res = await on.request("GET", `/api/v1/stores/${tenant.store.id}/${resource}?limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`, { key: tenant.key });
    records.push(...(res.body.data as Array<Record<string, unknown>>));
    cursor = res.body.next_cursor as string | null;
  } while (cursor);
  // What the shop sent and what it came to, without the service's own ids and times.
  return records
    .map(({ id: _id, created_at: _c, updated_at: _u, store_id: _s, ...rest }) => rest)
    .sort((a, b) => String(a.external_id).localeCompare(String(b.external_id)));
}

/** Orders of a shop's history: customers shared by several orders, keys repeated (a later line changes an earlier one), some lines refused. */
function history(count: number) {
  const lines: unknown[] = [];
  for (let i = 0; i < count; i++) {
    const customer = i % 40;
    lines.push({
      external_id: `o-${i % (count - 250)}`,
      placed_at: `2024-0${1 + (i % 9)}-1${i % 10}T10:00:00Z`,
      total_price: (i % 97) + 0.5,
      financial_status: i % 3 === 0 ? "paid" : "pending",
      customer: { external_id: `c-${customer}`, phone: `+1415555${String(1000 + customer)}`, first_name: `Name ${i}` },
      line_items: [{ sku: `SKU-${i % 7}`, quantity: 1 + (i % 3) }],
      tags: i % 5 === 0 ? ["vip"] : [],
    });
    if (i % 250 === 17) lines.push({ external_id: `bad-${i}`, placed_at: "yesterday", total_price: -1 });
    if (i % 400 === 3) lines.push("{not json");
    if (i % 600 === 5) lines.push("");
  }
  return lines;
}

describe("imports", () => {
  // 1,400 pushes one by one beside the import: generous on a busy machine (two suites at once took over 30 s).
  it("store a file as the same lines pushed one by one as backfill, the last line for a key winning, and fire no automation", { timeout: 180_000 }, async () => {
    const [imported, pushed] = [await server.createTenant(), await server.createTenant()];
    const lines = history(1400);
    const res = await upload(server, imported, "orders", gzipSync(ndjson(lines)), { "Content-Encoding": "gzip" });
    expect(res.status).toBe(202);
    expect(res.headers.get("location")).toBe(`/api/v1/stores/${imported.store.id}/imports/${res.body.id}`);
    expect(res.body).toMatchObject({ store_id: imported.store.id, kind: "orders", lines: lines.filter((line) => line !== "").length });
    expect(["queued", "running", "succeeded"]).toContain(res.body.status);

    const statuses: number[] = [];
    for (const line of lines) {
      if (line === "") continue;
      const push = await server.request("POST", `/api/v1/stores/${pushed.store.id}/orders`, {
        key: pushed.key,
        ...(typeof line === "string" ? { rawBody: line } : { body: line }),
        headers: { "X-Backfill": "true" },
      });
      statuses.push(push.status);
    }
    const done = await finished(server, imported, res.body.id);
    expect(done).toMatchObject({
      status: "succeeded",
      processed: statuses.length,
      created: statuses.filter((s) => s === 201).length,
      updated: statuses.filter((s) => s === 200).length,
      failed: statuses.filter((s) => s >= 400).length,
    });
    expect(await readAll(server, imported, "orders")).toEqual(await readAll(server, pushed, "orders"));
    expect(await readAll(server, imported, "customers")).toEqual(await readAll(server, pushed, "customers"));
    const jobs = await server.db.selectFrom("automation_jobs").select("id").where("store_id", "=", imported.store.id).execute();
    expect(jobs).toEqual([]);
  });

  it("count each kind's lines, stale ones and refusals included, as the same pushes answer them", { timeout: 180_000 }, async () => {
    const later = "2026-11-22T12:00:00Z";
    const earlier = "2026-11-22T11:00:00Z";
    const customer = (n: number) => ({ external_id: `c-${n}`, phone: `+1415555${String(2000 + n)}` });
    const order = (id: string, extra: Record<string, unknown> = {}) => ({ external_id: id, placed_at: "2026-11-20T10:00:00Z", total_price: 12.5, customer: customer(1), ...extra });
    /** Per kind: what both stores hold first (records newer than some lines), then the file's lines. */
    const kinds: Record<string, { before: Array<[string, unknown]>; lines: unknown[] }> = {
      customers: {
        before: [["customers", { ...customer(1), first_name: "Kept", source_updated_at: later }]],
        lines: [{ ...customer(1), first_name: "Stale", source_updated_at: earlier }, { ...customer(2), tags: ["a"] }, { ...customer(2), first_name: "Again" }, { ...customer(3), phone: "no phone" }],
      },
      checkouts: {
        before: [["checkouts", { external_id: "k-1", abandoned_at: "2026-11-20T09:00:00Z", total_price: 4, customer: customer(1), source_updated_at: later }]],
        lines: [
          { external_id: "k-1", abandoned_at: "2026-11-20T09:00:00Z", total_price: 9, customer: customer(1), source_updated_at: earlier },
          { external_id: "k-2", abandoned_at: "2026-11-20T09:30:00Z", total_price: 7, customer: customer(2), line_items: [{ sku: "A" }] },
          { external_id: "k-2", abandoned_at: "2026-11-20T09:30:00Z", total_price: 8, customer: customer(2), recovery_url: "https://shop.example/k-2" },
          { external_id: "k-3", total_price: 1 },
        ],
      },
      orders: {
        before: [["orders", order("o-1", { financial_status: "paid", source_updated_at: later })]],
        lines: [order("o-1", { financial_status: "refunded", source_updated_at: earlier }), order("o-2", { tags: ["x"] }), order("o-2", { currency: "eur" }), order("o-3", { total_price: -1 })],
      },
      shipments: {
        before: [
          ["orders", order("o-1")],
          ["shipments", { external_id: "s-1", order_external_id: "o-1", status: "delivered", source_updated_at: later }],
        ],
        lines: [
          { external_id: "s-1", order_external_id: "o-1", status: "pending", source_updated_at: earlier },
          { external_id: "s-2", order_external_id: "o-1", carrier: "UPS" },
          { external_id: "s-2", order_external_id: "o-1", status: "in_transit" },
          { external_id: "s-3", order_external_id: "no-such-order" },
        ],
      },
    };
    for (const [kind, { before, lines }] of Object.entries(kinds)) {
      const [imported, pushed] = [await server.createTenant(), await server.createTenant()];
      for (const tenant of [imported, pushed]) {
        for (const [resource, body] of before) expect((await server.request("POST", `/api/v1/stores/${tenant.store.id}/${resource}`, { key: tenant.key, body })).status).toBe(201);
      }
      const answers: Array<{ status: number; code?: unknown }> = [];
      for (const line of lines) {
        const push = await server.request("POST", `/api/v1/stores/${pushed.store.id}/${kind}`, { key: pushed.key, body: line, headers: { "X-Backfill": "true" } });
        answers.push({ status: push.status, ...(push.status >= 400 ? { code: push.body.code } : {}) });
      }
      // Each kind's file holds a stale line, a new record, a change to it and a refusal.
      expect(answers.map((answer) => (answer.status >= 400 ? "refused" : answer.status))).toEqual([200, 201, 200, "refused"]);
      const res = await upload(server, imported, kind, ndjson(lines));
      expect(res.status).toBe(202);
      expect(await finished(server, imported, res.body.id)).toMatchObject({ status: "succeeded", processed: 4, created: 1, updated: 2, failed: 1 });
      expect(await errorsOf(server, imported, res.body.id)).toEqual([expect.objectContaining({ line: 4, status: answers[3]?.status, code: answers[3]?.code })]);
      // A shipment's order is named by its key; `order_id` is each store's own row.
      const shopView = async (tenant: Tenant) => (await readAll(server, tenant, kind)).map(({ order_id: _o, ...rest }) => rest);
      expect(await shopView(imported)).toEqual(await shopView(pushed));
    }
  });

  it("apply chunks in file order whether their keys meet the chunk before's or not: the last line for a key wins", { timeout: 180_000 }, async () => {
    const tenant = await server.createTenant();
    // Five chunks: an odd one rewrites half the keys of the one before; an even one meets none of them.
    const size = LIMITS.importChunkLines;
    const lines: Array<{ external_id: string; phone: string; first_name: string }> = [];
    const last = new Map<string, string>();
    for (let chunk = 0; chunk < 5; chunk++) {
      for (let i = 0; i < size; i++) {
        const owner = chunk % 2 === 1 && i < size / 2 ? chunk - 1 : chunk;
        const key = `k-${owner}-${i}`;
        const line = { external_id: key, phone: `+141555${String(owner * size + i).padStart(5, "0")}`, first_name: `line ${lines.length + 1}` };
        lines.push(line);
        last.set(key, line.first_name);
      }
    }
    const res = await upload(server, tenant, "customers", gzipSync(ndjson(lines)), { "Content-Encoding": "gzip" });
    expect(res.status).toBe(202);
    expect(await finished(server, tenant, res.body.id)).toMatchObject({ status: "succeeded", processed: 5 * size, created: 4 * size, updated: size, failed: 0 });
    const stored = await readAll(server, tenant, "customers");
    expect(new Map(stored.map((customer) => [customer.external_id, customer.first_name]))).toEqual(last);
  });

  it("list each refused line with its line number, external_id and details", async () => {
    const tenant = await server.createTenant();
    const good = { external_id: "c-1", phone: "+14155550100" };
    // A key no JSON column can hold (a lone surrogate) is named in its refusal as near as one can.
    const surrogate = String.raw`{"external_id":"c-3","phone":"+14155550101","tags":{"k\uDC00":1}}`;
    const res = await upload(server, tenant, "customers", ndjson([good, "", { external_id: "c-2", phone: "not a phone" }, "[1,2]", "{oops", surrogate, { ...good, first_name: "Ada" }]));
    expect(res.status).toBe(202);
    expect(await finished(server, tenant, res.body.id)).toMatchObject({ status: "succeeded", lines: 6, processed: 6, created: 1, updated: 1, failed: 4 });
    expect(await errorsOf(server, tenant, res.body.id)).toEqual([
      { line: 3, external_id: "c-2", status: 422, code: "validation_failed", error: "Invalid request body", details: [{ path: "phone", message: expect.any(String) }] },
      { line: 4, external_id: null, status: 422, code: "validation_failed", error: "Invalid request body", details: [{ path: "", message: "must be a JSON object" }] },
      { line: 5, external_id: null, status: 400, code: "malformed_json", error: "Malformed JSON body" },
      { line: 6, external_id: null, status: 422, code: "validation_failed", error: "Invalid request body", details: [{ path: "tags.k\uFFFD", message: expect.any(String) }] },
    ]);
    const stored = await server.request("GET", `/api/v1/stores/${tenant.store.id}/customers/c-1`, { key: tenant.key });
    expect(stored.body).toMatchObject({ external_id: "c-1", first_name: "Ada" });
  });

  it("refuse a file that is not NDJSON of its kind, storing nothing", async () => {
    const tenant = await server.createTenant();
    const notJson = await upload(server, tenant, "orders", "external_id,total\n1,2\n");
    expect(notJson.status).toBe(422);
    expect(notJson.body).toMatchObject({ code: "import_file_invalid", details: [{ path: "", message: "line 1 is not a JSON object" }, { path: "line 1", message: "Malformed JSON body" }, { path: "line 2", message: "Malformed JSON body" }] });
    const customersAsShipments = await upload(server, tenant, "shipments", ndjson([{ external_id: "c-1", phone: "+14155550100" }]));
    expect(customersAsShipments.status).toBe(422);
    expect(customersAsShipments.body.details).toContainEqual({ path: "", message: "none of the first 1 lines is a valid record of shipments" });
    expect((await upload(server, tenant, "orders", "\n\n")).body).toMatchObject({ code: "import_file_invalid" });
    expect((await upload(server, tenant, "orders", ndjson([{}]), { "Content-Type": "application/json" })).status).toBe(415);
    expect((await upload(server, tenant, "orders", ndjson([{}]), { "Content-Encoding": "br" })).status).toBe(415);
    expect((await upload(server, tenant, "orders", "not gzip at all", { "Content-Encoding": "gzip" })).body).toMatchObject({ code: "import_file_invalid" });
    const wrongKind = await upload(server, tenant, "products", ndjson([{}]));
    expect(wrongKind.status).toBe(422);
    expect(wrongKind.body.details).toEqual([expect.objectContaining({ path: "kind" })]);
    const list = await server.request("GET", `/api/v1/stores/${tenant.store.id}/imports`, { key: tenant.key });
    expect(list.body).toEqual({ data: [] });
    expect(await server.db.selectFrom("import_chunks").select("seq").execute()).toEqual([]);
  });

  it("answer 413 to a file over its limit and to a gzip bomb, read by the client; the bomb's import fails with its code", async () => {
    const tenant = await idle.createTenant();
    const line = JSON.stringify({ external_id: "c-1", phone: "+14155550100", first_name: "x".repeat(200) });
    const big = ndjson(Array.from({ length: 3000 }, () => line));
    const over = await upload(idle, tenant, "customers", big);
    expect(over.status).toBe(413);
    expect(over.body).toMatchObject({ code: "import_too_large" });
    // 50 MB of one repeated line, some 100 kB gzipped.
    const bomb = gzipSync(Buffer.from(`${line}\n`.repeat(200_000)));
    const exploded = await upload(idle, tenant, "customers", bomb, { "Content-Encoding": "gzip" });
    expect(exploded.status).toBe(413);
    // The first declared a length no file of the limit has: refused unread. The bomb's first lines were
    // stored before it passed the limit: its import failed, with why, and keeps nothing.
    const list = await idle.request("GET", `/api/v1/stores/${tenant.store.id}/imports`, { key: tenant.key });
    expect(list.body.data).toEqual([
      expect.objectContaining({ status: "failed", error_code: "import_too_large", error: expect.stringContaining("size limit"), finished_at: expect.any(String) }),
    ]);
    const ids = (list.body.data as Array<{ id: number }>).map((row) => row.id);
    expect(await idle.db.selectFrom("import_chunks").select("seq").where("import_id", "in", ids).execute()).toEqual([]);
  });

  it("check the key, the store and the rate limit before reading the file", async () => {
    const [tenant, other] = [await server.createTenant(), await server.createTenant()];
    const body = ndjson([{ external_id: "c-1", phone: "+14155550100" }]);
    expect((await upload(server, { ...tenant, key: "sk_test_wrong_key_0000000000" }, "customers", body)).status).toBe(401);
    expect((await upload(server, { ...other, store: tenant.store }, "customers", body)).status).toBe(403);
    expect((await server.request("GET", `/api/v1/stores/${tenant.store.id}/imports/1`, { key: other.key })).status).toBe(403);
    const mine = await upload(server, other, "customers", body);
    // Another store's import answers as an unknown one.
    expect((await server.request("GET", `/api/v1/stores/${tenant.store.id}/imports/${mine.body.id}`, { key: tenant.key })).body).toMatchObject({ code: "import_not_found" });
  });

  it("cancel an import that has not ended; what was merged stays", async () => {
    const tenant = await idle.createTenant();
    const res = await upload(idle, tenant, "customers", ndjson([{ external_id: "c-1", phone: "+14155550100" }]));
    expect(res.body.status).toBe("queued");
    const path = `/api/v1/stores/${tenant.store.id}/imports/${res.body.id}`;
    const cancelled = await idle.request("DELETE", path, { key: tenant.key });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ status: "cancelled", processed: 0 });
    expect((await idle.request("GET", path, { key: tenant.key })).body).toMatchObject({ status: "cancelled", finished_at: expect.any(String) });
    expect((await idle.request("DELETE", path, { key: tenant.key })).body).toMatchObject({ code: "import_finished" });
    expect((await idle.request("GET", `/api/v1/stores/${tenant.store.id}/customers/c-1`, { key: tenant.key })).status).toBe(404);
  });

  it("fail an upload whose server stopped saying it is alive, dropping its chunks, and keep one still arriving", async () => {
    const tenant = await idle.createTenant();
    const [upload] = await idle.db
      .insertInto("imports")
      .values({ store_id: tenant.store.id, team_id: tenant.team.id, key_id: tenant.keyId, kind: "customers", updated_at: new Date(Date.now() - 60 * 1000) })
      .returning("id")
      .execute();
    const id = upload?.id ?? 0;
    const fresh = await idle.db.insertInto("imports").values({ store_id: tenant.store.id, team_id: tenant.team.id, key_id: tenant.keyId, kind: "customers" }).returning("id").executeTakeFirstOrThrow();
    await idle.db.insertInto("import_chunks").values({ import_id: id, seq: 0, first_line: 1, lines: 1, body: Buffer.from("x") }).execute();
    const path = `/api/v1/stores/${tenant.store.id}/imports/${id}`;
    // Receiving: nobody's yet.
    expect((await idle.request("GET", path, { key: tenant.key })).status).toBe(404);
    const runner = startImportRunner({ db: idle.db, logger: createLogger("silent") }, { concurrency: 1, leaseSeconds: 30, perTeam: 2, pollIntervalMs: 20, abandonedAfterSeconds: 30 });
    try {
      await expect.poll(async () => (await idle.request("GET", path, { key: tenant.key })).body.status).toBe("failed");
    } finally {
      await runner.stop();
    }
    expect((await idle.request("GET", path, { key: tenant.key })).body).toMatchObject({ status: "failed", error_code: "upload_interrupted", finished_at: expect.any(String) });
    expect(await idle.db.selectFrom("import_chunks").select("seq").where("import_id", "=", id).execute()).toEqual([]);
    // An upload still arriving (touched within the staleness) stays.
    expect(await idle.db.selectFrom("imports").select("status").where("id", "=", fresh.id).executeTakeFirst()).toEqual({ status: "receiving" });
    await idle.db.deleteFrom("imports").where("id", "=", fresh.id).execute();
  });

  it("run a bounded number of a team's imports at once; the rest wait, queued, while other teams' start", async () => {
    const [team, other] = [await idle.createTenant(), await idle.createTenant()];
    const file = ndjson([{ external_id: "c-1", phone: "+14155550100" }]);
    const first = await upload(idle, team, "customers", file);
    const second = await upload(idle, team, "customers", file);
    const theirs = await upload(idle, other, "customers", file);
    const status = async (tenant: Tenant, id: number) => (await idle.request("GET", `/api/v1/stores/${tenant.store.id}/imports/${id}`, { key: tenant.key })).body.status;
    // One import a team: the team's first starts, its second waits, the other team's starts.
    const started = [];
    for (let i = 0; i < 4; i++) started.push(await idle.db.transaction().execute((trx) => startQueued(trx, 1)));
    expect(started).toEqual([true, true, false, false]);
    expect([await status(team, first.body.id), await status(team, second.body.id), await status(other, theirs.body.id)]).toEqual(["running", "queued", "running"]);
    // Once the team's first ends, its second starts.
    await idle.request("DELETE", `/api/v1/stores/${team.store.id}/imports/${first.body.id}`, { key: team.key });
    expect(await idle.db.transaction().execute((trx) => startQueued(trx, 1))).toBe(true);
    expect(await status(team, second.body.id)).toBe("running");
    for (const [tenant, id] of [[team, second.body.id], [other, theirs.body.id]] as const) await idle.request("DELETE", `/api/v1/stores/${tenant.store.id}/imports/${id}`, { key: tenant.key });
  });

  it("finish an import whose process died holding a chunk, and share its chunks with another process, with exact counts", { timeout: 180_000 }, async () => {
    const tenant = await idle.createTenant();
    const lines = Array.from({ length: 4200 }, (_, i) => ({ external_id: `c-${i % 4000}`, phone: `+1415${String(5_000_000 + (i % 4000))}`, first_name: `N${i}` }));
    const res = await upload(idle, tenant, "customers", ndjson(lines));
    expect(res.status).toBe(202);
    // A process takes the first chunk (the import is started for it) and dies before merging it: its lease, a second, runs out.
    await idle.db.updateTable("imports").set({ status: "running", started_at: new Date() }).where("id", "=", res.body.id).execute();
    const held = await claimChunk(idle.db, "a process that died", 1, 2);
    expect(held?.seq).toBe(0);
    // Two runners, as two processes would be, share what is left.
    const logger = createLogger("silent");
    const runners = [0, 1].map(() => startImportRunner({ db: idle.db, logger }, { concurrency: 2, leaseSeconds: 30, perTeam: 2, pollIntervalMs: 20 }));
    try {
      expect(await finished(idle, tenant, res.body.id)).toMatchObject({ status: "succeeded", processed: 4200, created: 4000, updated: 200, failed: 0 });
    } finally {
      await Promise.all(runners.map((runner) => runner.stop()));
    }
    const stored = await idle.db.selectFrom("customers").select(["external_id", "first_name"]).where("store_id", "=", tenant.store.id).where("external_id", "in", ["c-0", "c-199", "c-200"]).orderBy("external_id").execute();
    expect(stored).toEqual([
      { external_id: "c-0", first_name: "N4000" },
      { external_id: "c-199", first_name: "N4199" },
      { external_id: "c-200", first_name: "N200" },
    ]);
  });
});

describe("an import beside another team's live pushes", () => {
  it("counts a store's API calls as live traffic while they are answered, and not an import's own calls", async () => {
    const shared = await startTestServer();
    try {
      const tenant = await shared.createTenant();
      const listed = await shared.request("GET", `/api/v1/stores/${tenant.store.id}/imports`, { key: tenant.key });
      expect(listed.status).toBe(200);
      expect(shared.live.busy(60_000)).toBe(false);
      const pushed = await shared.request("POST", `/api/v1/stores/${tenant.store.id}/orders`, {
        key: tenant.key,
        body: { external_id: "live-count", placed_at: "2026-11-22T10:00:00Z", total_price: 5, customer: { phone: "+14155552671" } },
      });
      expect(pushed.status).toBe(201);
      // Counted out once its connection is done with it (a moment after the client has read the answer).
      await expect.poll(() => shared.live.inFlight).toBe(0);
      expect(shared.live.busy(60_000)).toBe(true);
    } finally {
      await shared.close();
    }
  });

  it("yields to them and still finishes, exact, while every push is answered", async () => {
    const shared = await startTestServer({ imports: { liveShare: 0.2 } });
    try {
      const importer = await shared.createTenant();
      const neighbour = await shared.createTenant();
      const orders = Array.from({ length: 2_500 }, (_, i) => ({
        external_id: `live-${i}`,
        placed_at: "2026-11-22T10:00:00Z",
        total_price: 10 + (i % 7),
        customer: { external_id: `c-${i % 300}`, phone: `+1202555${String(1000 + (i % 300))}` },
      }));
      const created = await upload(shared, importer, "orders", gzipSync(ndjson(orders)), { "Content-Encoding": "gzip" });
      expect(created.status).toBe(202);
      let done = false;
      const statuses: number[] = [];
      const pusher = async (lane: number) => {
        for (let i = 0; !done; i++) {
          const res = await shared.request("POST", `/api/v1/stores/${neighbour.store.id}/orders`, {
            key: neighbour.key,
            body: { external_id: `n-${lane}-${i}`, placed_at: "2026-11-22T10:00:00Z", total_price: 5, customer: { phone: "+14155552671" } },
          });
          statuses.push(res.status);
        }
      };
      const pushers = [pusher(0), pusher(1), pusher(2)];
      const state = await finished(shared, importer, created.body.id).finally(() => (done = true));
      await Promise.all(pushers);
      expect(state).toMatchObject({ status: "succeeded", processed: 2_500, created: 2_500, failed: 0 });
      expect(statuses.length).toBeGreaterThan(0);
      expect(new Set(statuses)).toEqual(new Set([201]));
      const stored = await shared.request("GET", `/api/v1/stores/${neighbour.store.id}/orders?limit=1`, { key: neighbour.key });
      expect(stored.status).toBe(200);
    } finally {
      await shared.close();
    }
  });
});
