import net from "node:net";
import { gzipSync } from "node:zlib";
import { LIMITS } from "@commerce-ingest/shared";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../../test/helpers.js";

/**
 * What an upload can do to the service, tried as a hostile client would: the
 * encodings it may lie about, trickling and falling silent, going away
 * mid-way, and more uploads at once than a process takes.
 */
let server: TestServer;

beforeAll(async () => {
  // No import runner (what is received stays queued), a request timeout of a second, one upload at a time.
  server = await startTestServer({ connections: { requestTimeoutMs: 1_000 }, imports: { concurrency: 0, uploadsAtOnce: 1 } });
});
afterAll(async () => {
  await server?.close();
});

type Tenant = Awaited<ReturnType<TestServer["createTenant"]>>;

/** A chunk's worth of valid lines: once they arrive, the import exists. */
const CHUNK = Buffer.from(Array.from({ length: LIMITS.importChunkLines }, (_, i) => `${JSON.stringify({ external_id: `c-${i}`, phone: `+1415${String(5_550_000 + i)}` })}\n`).join(""));

/** An upload written by hand on its own connection: its headers, then whatever the test sends, and the answer as it comes. */
function rawUpload(tenant: Tenant, headers: Record<string, string> = {}) {
  const { port } = new URL(server.url);
  const socket = net.connect(Number(port), "127.0.0.1");
  const lines = [
    `POST /api/v1/stores/${tenant.store.id}/imports?kind=customers HTTP/1.1`,
    "Host: 127.0.0.1",
    `Authorization: Bearer ${tenant.key}`,
    "Content-Type: application/x-ndjson",
    "Content-Length: 100000000",
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
  ];
  socket.write(`${lines.join("\r\n")}\r\n\r\n`);
  let text = "";
  socket.on("data", (data: Buffer) => (text += data.toString()));
  socket.on("error", () => undefined);
  const answer = new Promise<{ status: number; headers: string; body: Record<string, unknown> }>((resolve) => {
    const settle = () => {
      const [head = "", body = ""] = text.split("\r\n\r\n");
      resolve({ status: Number(/^HTTP\/1\.1 (\d+)/.exec(head)?.[1] ?? 0), headers: head, body: body ? (JSON.parse(body) as Record<string, unknown>) : {} });
    };
    socket.on("data", () => {
      const [head = "", body = ""] = text.split("\r\n\r\n");
      const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? -1);
      if (length >= 0 && Buffer.byteLength(body) >= length) settle();
    });
    socket.on("close", settle);
  });
  return { socket, answer, answered: () => text.length > 0 };
}

async function importsOf(tenant: Tenant) {
  return (await server.request("GET", `/api/v1/stores/${tenant.store.id}/imports`, { key: tenant.key })).body.data as Array<Record<string, unknown>>;
}

async function upload(tenant: Tenant, body: string | Buffer, headers: Record<string, string> = {}) {
  const res = await fetch(`${server.url}/api/v1/stores/${tenant.store.id}/imports?kind=customers`, {
    method: "POST",
    headers: { Authorization: `Bearer ${tenant.key}`, "Content-Type": "application/x-ndjson", ...headers },
    body,
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
}

const chunksOf = async (tenant: Tenant) =>
  server.db.selectFrom("import_chunks").innerJoin("imports", "imports.id", "import_chunks.import_id").select("seq").where("imports.store_id", "=", tenant.store.id).execute();

describe("an import's upload", () => {
  it("is refused with a clear 4xx, storing nothing, when its encoding is not gzip or none, or not what it says", async () => {
    const tenant = await server.createTenant();
    const file = `${JSON.stringify({ external_id: "c-1", phone: "+14155550100" })}\n`;
    for (const encoding of ["br", "deflate", "gzip, gzip", "compress", "gzip, br"]) {
      const res = await upload(tenant, gzipSync(file), { "Content-Encoding": encoding });
      expect([encoding, res.status, res.body]).toEqual([encoding, 415, { error: "Content-Encoding must be gzip or identity", code: "unsupported_content_encoding" }]);
    }
    const notGzip = await upload(tenant, file, { "Content-Encoding": "gzip" });
    expect(notGzip.status).toBe(422);
    expect(notGzip.body).toMatchObject({ code: "import_file_invalid", details: [{ path: "", message: "the body is not valid gzip" }] });
    const unlabelled = await upload(tenant, gzipSync(file));
    expect(unlabelled.status).toBe(422);
    expect(unlabelled.body).toMatchObject({ code: "import_file_invalid", details: [{ path: "", message: expect.stringContaining("Content-Encoding: gzip") }] });
    const twice = await upload(tenant, gzipSync(gzipSync(file)), { "Content-Encoding": "gzip" });
    expect(twice.body).toMatchObject({ code: "import_file_invalid" });
    expect(await importsOf(tenant)).toEqual([]);
    expect(await chunksOf(tenant)).toEqual([]);
    // Said plainly, each is taken.
    for (const headers of [{}, { "Content-Encoding": "identity" }] as Array<Record<string, string>>) expect((await upload(tenant, file, headers)).status).toBe(202);
    for (const encoding of ["gzip", "x-gzip", "GZIP", "identity, gzip"]) expect((await upload(tenant, gzipSync(file), { "Content-Encoding": encoding })).status).toBe(202);
  });

  it("that trickles is answered 408, read by the client, and its import fails with request_timeout", async () => {
    const tenant = await server.createTenant();
    const { socket, answer, answered } = rawUpload(tenant);
    socket.write(CHUNK);
    // A byte every 50 ms: never silent for the second the server allows, far under its 16 KiB a second.
    const trickle = setInterval(() => !answered() && socket.write("{"), 50);
    try {
      const res = await answer;
      expect(res.status).toBe(408);
      expect(res.body).toEqual({ error: "Request timeout", code: "request_timeout" });
      expect(res.headers).toMatch(/connection: close/i);
    } finally {
      clearInterval(trickle);
      socket.destroy();
    }
    expect(await importsOf(tenant)).toEqual([expect.objectContaining({ status: "failed", error_code: "request_timeout", lines: LIMITS.importChunkLines, processed: 0 })]);
    expect(await chunksOf(tenant)).toEqual([]);
  });

  it("that falls silent is answered 408 too", async () => {
    const tenant = await server.createTenant();
    const { socket, answer } = rawUpload(tenant, { "Content-Encoding": "gzip" });
    socket.write(gzipSync(CHUNK));
    try {
      const res = await answer;
      expect(res.status).toBe(408);
      expect(res.body).toMatchObject({ code: "request_timeout" });
    } finally {
      socket.destroy();
    }
    await expect.poll(async () => (await importsOf(tenant))[0]?.error_code).toBe("request_timeout");
  });

  it("cut off mid-way leaves its import failed with upload_interrupted, its chunks dropped", async () => {
    const tenant = await server.createTenant();
    const { socket } = rawUpload(tenant);
    socket.write(CHUNK);
    socket.write('{"external_id":"c-late",');
    // Once its first chunk is stored, the client goes away.
    await expect.poll(async () => (await chunksOf(tenant)).length).toBe(1);
    socket.destroy();
    await expect.poll(async () => (await importsOf(tenant))[0]?.status).toBe("failed");
    expect(await importsOf(tenant)).toEqual([expect.objectContaining({ status: "failed", error_code: "upload_interrupted", error: expect.stringContaining("ended before the whole file arrived") })]);
    expect(await chunksOf(tenant)).toEqual([]);
  });

  it("past the uploads a process takes at once is answered 503 with Retry-After, before a byte is read", async () => {
    const [first, second] = [await server.createTenant(), await server.createTenant()];
    const holding = rawUpload(first);
    holding.socket.write(CHUNK);
    await expect.poll(async () => (await chunksOf(first)).length).toBe(1);
    const refused = await upload(second, CHUNK);
    expect(refused.status).toBe(503);
    expect(refused.body).toEqual({ error: "Too many uploads at once", code: "uploads_busy" });
    expect(refused.headers.get("retry-after")).toBe("5");
    expect(await importsOf(second)).toEqual([]);
    // The first ends (here, cut off): its slot is free again.
    holding.socket.destroy();
    await expect.poll(async () => (await importsOf(first))[0]?.status).toBe("failed");
    await expect.poll(async () => (await upload(second, CHUNK)).status).toBe(202);
  });
});
