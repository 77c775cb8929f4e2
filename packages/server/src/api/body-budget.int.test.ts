import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../../test/helpers.js";

/**
 * The bodies a process holds at once are weighed against its budget (here
 * 1 MiB): by their declared length before a byte is read, by what their
 * values take once parsed. A body that finds no room is answered 503
 * `server_busy`, nothing stored; one alone is always taken.
 */
let server: TestServer;
let tenant: Awaited<ReturnType<TestServer["createTenant"]>>;

beforeAll(async () => {
  server = await startTestServer({ bodyMemoryBytes: 1024 * 1024 });
  tenant = await server.createTenant();
});
afterAll(async () => {
  await server?.close();
});

/** A push that declares `length` bytes and sends only its start: it holds its share until its connection ends. */
function pushHeld(length: number) {
  const socket = net.connect(Number(new URL(server.url).port), "127.0.0.1");
  socket.on("error", () => undefined);
  socket.write(
    [`POST /api/v1/stores/${tenant.store.id}/customers HTTP/1.1`, "Host: 127.0.0.1", `Authorization: Bearer ${tenant.key}`, "Content-Type: application/json", `Content-Length: ${length}`, "", "{"].join("\r\n"),
  );
  return socket;
}

const customer = (externalId: string, extra: Record<string, unknown> = {}) => ({ external_id: externalId, phone: "+14155550100", ...extra });
/** `count` empty objects: a few bytes each, some 64 bytes each once parsed. */
const emptyObjects = (count: number) => Array.from({ length: count }, () => ({}));

describe("the bodies a process holds at once", () => {
  it("take a body alone whatever it weighs, and refuse one that finds no room, by its declared length, unread", async () => {
    // Alone, a body of 300,000 values (some 40 MiB once parsed, over the budget) is read and answered as usual.
    const heavy = await server.request("POST", `/api/v1/stores/${tenant.store.id}/customers`, { key: tenant.key, body: customer("heavy", { tags: emptyObjects(300_000) }) });
    expect(heavy.status).toBe(422);

    const held = pushHeld(700 * 1024);
    try {
      await expect
        .poll(async () => {
          const res = await server.request("POST", `/api/v1/stores/${tenant.store.id}/customers`, { key: tenant.key, body: customer("big", { first_name: "x".repeat(400 * 1024) }) });
          return [res.status, res.body, res.headers.get("retry-after")];
        })
        .toEqual([503, { error: "Service unavailable", code: "server_busy" }, "1"]);
      // What fits beside it is taken.
      expect((await server.request("POST", `/api/v1/stores/${tenant.store.id}/customers`, { key: tenant.key, body: customer("small") })).status).toBe(201);
      // A small body whose values weigh more than the room left is refused once parsed, before anything runs.
      const weighty = await server.request("POST", `/api/v1/stores/${tenant.store.id}/customers`, { key: tenant.key, body: customer("weighty", { tags: emptyObjects(5_000) }) });
      expect([weighty.status, weighty.body.code]).toEqual([503, "server_busy"]);
    } finally {
      held.destroy();
    }
    // Once the held body's connection ends, its share comes back.
    await expect.poll(async () => (await server.request("POST", `/api/v1/stores/${tenant.store.id}/customers`, { key: tenant.key, body: customer("big", { first_name: "x".repeat(400 * 1024) }) })).status).toBe(422);
    expect((await server.request("GET", `/api/v1/stores/${tenant.store.id}/customers/weighty`, { key: tenant.key })).status).toBe(404);
  });
});
