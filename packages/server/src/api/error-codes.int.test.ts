import net from "node:net";
import { ERRORS, type ErrorCode } from "@commerce-ingest/shared";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_TOKEN, onceAcrossDatabases, refuseInserts, startTestServer, type TestServer } from "../../test/helpers.js";

/**
 * Every error path the service answers, walked once: each answer's body
 * carries the code of the contract's table (`ERRORS`), beside its unchanged
 * message, and that code is one the OpenAPI document's error enum lists.
 */
let server: TestServer;
let tenant: Awaited<ReturnType<TestServer["createTenant"]>>;
let enumerated: string[];

beforeAll(async () => {
  server = await startTestServer({
    bodyLimitBytes: 2_000,
    connections: { headersTimeoutMs: 1_000, requestTimeoutMs: 1_000 },
  });
  tenant = await server.createTenant();
  const document = (await server.request("GET", "/api/v1/openapi.json")).body as { components: { schemas: { Error: { properties: { code: { enum: string[] } } } } } };
  enumerated = document.components.schemas.Error.properties.code.enum;
});
afterAll(() => server?.close());

let seq = 0;
const uid = (prefix: string) => `${prefix}-${Date.now()}-${++seq}`;
const store = () => `/api/v1/stores/${tenant.store.id}`;
const order = (id: string) => ({ external_id: id, placed_at: "2026-11-22T10:00:00Z", total_price: 10, customer: { phone: "+14155552671" } });

/** Sends raw bytes and returns what came back before the connection closed. */
function raw(bytes: string): Promise<string> {
  const { port } = new URL(server.url);
  return new Promise((resolve) => {
    let received = "";
    const socket = net.connect({ host: "127.0.0.1", port: Number(port) }, () => socket.write(bytes));
    socket.on("data", (chunk: Buffer) => (received += chunk.toString()));
    socket.on("error", () => undefined);
    socket.on("close", () => resolve(received));
  });
}
const lastAnswer = (received: string) => {
  const answer = received.slice(received.lastIndexOf("HTTP/1.1 "));
  return { status: Number(answer.slice(9, 12)), body: JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4)) as unknown };
};

/** Each error path: how to reach it, and the code it must answer. */
const paths: Array<[ErrorCode, string, () => Promise<{ status: number; body: unknown }>]> = [
  ["API_KEY_MISSING", "no Authorization header", () => server.request("POST", `${store()}/customers`, { body: { phone: "+14155552671" } })],
  ["API_KEY_INVALID", "an unknown key", () => server.request("POST", `${store()}/customers`, { key: "x".repeat(24), body: { phone: "+14155552671" } })],
  ["STORE_FORBIDDEN", "another team's store", async () => {
    const other = await server.createTenant();
    return server.request("POST", `/api/v1/stores/${other.store.id}/customers`, { key: tenant.key, body: { phone: "+14155552671" } });
  }],
  ["STORE_NOT_FOUND", "an unknown store", () => server.request("POST", "/api/v1/stores/999999999/customers", { key: tenant.key, body: { phone: "+14155552671" } })],
  ["ORDER_NOT_FOUND", "a PATCH of an unknown order", () => server.request("PATCH", `${store()}/orders/${uid("none")}`, { key: tenant.key, body: {} })],
  ["CHECKOUT_NOT_FOUND", "a PATCH of an unknown checkout", () => server.request("PATCH", `${store()}/checkouts/${uid("none")}`, { key: tenant.key, body: {} })],
  ["CUSTOMER_NOT_FOUND", "a read of an unknown customer", () => server.request("GET", `${store()}/customers/${uid("none")}`, { key: tenant.key })],
  ["SHIPMENT_NOT_FOUND", "a read of an unknown shipment", () => server.request("GET", `${store()}/shipments/${uid("none")}`, { key: tenant.key })],
  ["SHIPMENT_ORDER_NOT_FOUND", "a shipment of an unknown order", () => server.request("POST", `${store()}/shipments`, { key: tenant.key, body: { external_id: uid("s"), order_external_id: uid("none") } })],
  ["MALFORMED_JSON", "a body that is not JSON", () => server.request("POST", `${store()}/customers`, { key: tenant.key, rawBody: "{" })],
  ["UNSUPPORTED_MEDIA_TYPE", "a body sent as text", () => server.request("POST", `${store()}/customers`, { key: tenant.key, rawBody: "{}", contentType: "text/plain" })],
  ["BODY_TOO_LARGE", "a body over the limit", () => server.request("POST", `${store()}/customers`, { key: tenant.key, rawBody: JSON.stringify({ phone: "+14155552671", tags: ["x".repeat(3_000)] }) })],
  ["VALIDATION_FAILED", "a field of the wrong type", () => server.request("POST", `${store()}/customers`, { key: tenant.key, body: { phone: 1 } })],
  ["IDEMPOTENCY_KEY_REUSED", "an Idempotency-Key sent again with another body", async () => {
    const key = uid("idem");
    await server.request("POST", `${store()}/orders`, { key: tenant.key, body: order(uid("o")), headers: { "Idempotency-Key": key } });
    return server.request("POST", `${store()}/orders`, { key: tenant.key, body: order(uid("o")), headers: { "Idempotency-Key": key } });
  }],
  ["NOT_FOUND", "an unknown path", () => server.request("GET", "/api/v1/nothing-here", { key: tenant.key })],
  ["METHOD_NOT_ALLOWED", "a known path with another method", () => server.request("PUT", `${store()}/orders`, { key: tenant.key, body: {} })],
  ["INTERNAL", "a write the database refuses for no reason of the caller's", async () => {
    const restore = await refuseInserts(server.db, "orders", "refuse-");
    try {
      return await server.request("POST", `${store()}/orders`, { key: tenant.key, body: order(uid("refuse")) });
    } finally {
      await restore();
    }
  }],
  ["ADMIN_TOKEN_MISSING", "the operator API without its token", () => server.request("GET", "/admin/v1/teams")],
  ["ADMIN_TOKEN_INVALID", "the operator API with a wrong token", () => server.request("GET", "/admin/v1/teams", { key: "not-the-admin-token-at-all-0123" })],
  ["TEAM_NOT_FOUND", "an operator's store for an unknown team", () => server.request("POST", "/admin/v1/stores", { key: ADMIN_TOKEN, body: { team_id: 999999999, name: "x" } })],
  ["ADMIN_STORE_NOT_FOUND", "an operator's change of an unknown store", () => server.request("PATCH", "/admin/v1/stores/999999999", { key: ADMIN_TOKEN, body: { name: "x" } })],
  ["KEY_NOT_FOUND", "an operator deletion of an unknown key", () => server.request("DELETE", "/admin/v1/keys/999999999", { key: ADMIN_TOKEN })],
  ["MALFORMED_REQUEST", "a request that is not HTTP", async () => lastAnswer(await raw(`POST ${store()}/customers HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n{}`))],
  ["HEADERS_TOO_LARGE", "headers over 16 KiB", async () => lastAnswer(await raw(`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Filler: ${"x".repeat(20_000)}\r\n\r\n`))],
  ["REQUEST_TIMEOUT", "a body that never ends", async () => lastAnswer(await raw(`POST ${store()}/customers HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{`))],
    ["RATE_LIMITED", "more requests than the key's limit", async () => {
    const limited = await startTestServer({ rateLimit: { requests: 1, windowSeconds: 60 } });
    try {
      const t = await limited.createTenant();
      const push = () => limited.request("POST", `/api/v1/stores/${t.store.id}/customers`, { key: t.key, body: { phone: "+14155552671" } });
      await push();
      return await push();
    } finally {
      await limited.close();
    }
  }],
];

/** Codes whose paths another test walks, where they need a setting or a race of their own. */
const ELSEWHERE: Partial<Record<ErrorCode, string>> = {
  REQUEST_IN_PROGRESS: "idempotency.test.ts (concurrent requests with one key)",
  SERVICE_UNAVAILABLE: "hardening.test.ts (a request past its deadline) and the fault suite",
  IMPORT_NOT_FOUND: "imports.test.ts (another store's import)",
  IMPORT_FINISHED: "imports.test.ts (a cancelled import cancelled again)",
  IMPORT_MEDIA_TYPE: "imports.test.ts (a file sent as JSON)",
  IMPORT_FILE_INVALID: "imports.test.ts (CSV, another kind's records, no record) and uploads.test.ts (gzip that is not, gzip unlabelled)",
  IMPORT_TOO_LARGE: "imports.test.ts (a file over the limit, a gzip bomb) and upload-memory.test.ts (1,100 lines of 1 MB)",
  UNSUPPORTED_CONTENT_ENCODING: "uploads.test.ts (br, deflate, gzip twice)",
  UPLOADS_BUSY: "uploads.test.ts (an upload past those a process takes at once)",
  UPLOAD_INTERRUPTED: "uploads.test.ts (an upload cut off mid-way: its import's error_code, as no client is left to read it)",
  SERVER_BUSY: "body-budget.int.test.ts (a body that finds no room in the process's budget)",
};
/** The console's procedures answer in tRPC's own shape, not the API's envelope. */
const CONSOLE: readonly ErrorCode[] = ["SIGN_IN_REQUIRED", "SIGN_IN_FAILED", "SIGN_IN_THROTTLED", "CROSS_SITE_REQUEST", "INVITATION_INVALID", "MEMBER_EXISTS", "ALREADY_MEMBER", "INVITATION_OTHER_ACCOUNT", "MEMBER_NOT_FOUND", "LAST_MEMBER",
  // Delivery and accounts (console-delivery and console-security test each).
  "MESSAGE_NOT_FOUND", "ENDPOINT_NOT_FOUND", "ENDPOINT_INVALID", "ENDPOINT_ADDRESS_REFUSED", "RESET_INVALID", "PASSWORD_INCORRECT", "OWNER_REQUIRED", "LAST_OWNER",
  "SESSION_NOT_FOUND", "SECOND_FACTOR_INVALID", "CHALLENGE_INVALID", "TWO_FACTOR_NOT_PENDING"];

describe.runIf(onceAcrossDatabases)("error codes", () => {
  it("the document's enum lists every code of the table, each once", () => {
    expect([...enumerated].sort()).toEqual(Object.values(ERRORS).map((entry) => entry.code).sort());
  });

  it("every error code of the API is walked here or named where it is", () => {
    const walked = new Set(paths.map(([code]) => code));
    const unwalked = (Object.keys(ERRORS) as ErrorCode[]).filter((code) => !walked.has(code) && !(code in ELSEWHERE) && !CONSOLE.includes(code));
    expect(unwalked).toEqual([]);
  });

  for (const [code, what] of paths) {
    it(`${what}: ${ERRORS[code].status} ${ERRORS[code].code}`, async () => {
      const [, , reach] = paths.find(([candidate]) => candidate === code) ?? [];
      const res = await reach?.();
      expect({ status: res?.status, body: res?.body }).toMatchObject({ status: ERRORS[code].status, body: { error: ERRORS[code].message, code: ERRORS[code].code } });
      expect(enumerated).toContain((res?.body as { code: string }).code);
    });
  }
});
