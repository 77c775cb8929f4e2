import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { withTestServer, type TestServer, type TestTenant, uid } from "../../test/helpers.js";

let server: TestServer;
let tenant: TestTenant;
withTestServer((started, created) => ([server, tenant] = [started, created]));

const order = (id: string) => ({ external_id: id, placed_at: "2026-11-22T10:00:00Z", total_price: 12.5, customer: { phone: "+14155552671" } });
const post = (path: string, body: unknown, key: string, headers: Record<string, string> = {}) =>
  server.request("POST", `/api/v1/stores/${tenant.store.id}/${path}`, { key: tenant.key, body, headers: { "Idempotency-Key": key, ...headers } });
const jobsOf = (externalId: string) => server.db.selectFrom("automation_jobs").select("id").where("flow", "=", "post_purchase").where("record_external_id", "=", externalId).execute();

describe("Idempotency-Key", () => {
  it("replays the first response (status, body, request id) without running the request again", async () => {
    const key = uid("key");
    const id = uid("order");
    const first = await post("orders", order(id), key, { "X-Request-Id": "first-attempt" });
    expect(first.status).toBe(201);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    const again = await post("orders", order(id), key, { "X-Request-Id": "retry-attempt" });
    expect(again.status).toBe(201);
    expect(again.text).toBe(first.text);
    expect(again.headers.get("x-request-id")).toBe("first-attempt");
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(await jobsOf(id)).toHaveLength(1);
    // Without the key, the same push is an update as usual.
    expect((await server.request("POST", `/api/v1/stores/${tenant.store.id}/orders`, { key: tenant.key, body: order(id) })).status).toBe(200);
  });

  it("refuses the key with a different request, and replays a refused request's 4xx as it was", async () => {
    const key = uid("key");
    expect((await post("orders", order(uid("order")), key)).status).toBe(201);
    const reused = await post("orders", order(uid("other")), key);
    expect(reused.status).toBe(422);
    expect(reused.body).toEqual({ error: "Idempotency-Key reused with a different request", code: "idempotency_key_reused", details: [{ path: "Idempotency-Key", message: "was first used with another request" }] });

    const invalidKey = uid("key");
    const invalid = await post("orders", { external_id: "x" }, invalidKey);
    expect(invalid.status).toBe(422);
    const replayed = await post("orders", { external_id: "x" }, invalidKey);
    expect(replayed.status).toBe(422);
    expect(replayed.body).toEqual(invalid.body);
    expect(replayed.headers.get("idempotent-replayed")).toBe("true");
  });

  it("keeps a body it could not read as the key's answer: the retry gets the same 400, replayed", async () => {
    const key = uid("key");
    const send = () => server.request("POST", `/api/v1/stores/${tenant.store.id}/orders`, { key: tenant.key, rawBody: '{"external_id": ', headers: { "Idempotency-Key": key, "X-Request-Id": uid("req") } });
    const first = await send();
    expect(first.status).toBe(400);
    expect(first.body).toEqual({ error: "Malformed JSON body", code: "malformed_json" });
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    const again = await send();
    expect(again.status).toBe(400);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.headers.get("x-request-id")).toBe(first.headers.get("x-request-id"));
    const kept = await server.db.selectFrom("idempotency_keys").select(["status", "body"]).where("key", "=", key).executeTakeFirstOrThrow();
    expect(kept).toEqual({ status: 400, body: JSON.stringify({ error: "Malformed JSON body", code: "malformed_json" }) });
  });

  it("runs two concurrent requests with one key once: the other waits its turn with 409 or gets the replay", async () => {
    const key = uid("key");
    const id = uid("order");
    const answers = await Promise.all(Array.from({ length: 8 }, () => post("orders", order(id), key)));
    const statuses = answers.map((res) => res.status);
    expect(statuses.filter((status) => status === 201).length).toBeGreaterThanOrEqual(1);
    expect(statuses.every((status) => status === 201 || status === 409)).toBe(true);
    expect(answers.filter((res) => res.status === 201 && res.headers.get("idempotent-replayed") === null)).toHaveLength(1);
    for (const res of answers.filter((answer) => answer.status === 409)) {
      expect(res.body).toEqual({ error: "Request in progress", code: "request_in_progress" });
      expect(res.headers.get("retry-after")).toBe("1");
    }
    expect(await jobsOf(id)).toHaveLength(1);
  });

  it("is forgotten after 24 hours: the same key then runs the request again", async () => {
    const key = uid("key");
    const id = uid("order");
    expect((await post("orders", order(id), key)).status).toBe(201);
    await server.db.updateTable("idempotency_keys").set({ expires_at: sql<Date>`now() - interval '1 second'` }).where("key", "=", key).execute();
    const after = await post("orders", order(id), key);
    expect(after.status).toBe(200);
    expect(after.headers.get("idempotent-replayed")).toBeNull();
  });

  it("works for PATCH and DELETE, is kept per store, and refuses a malformed key", async () => {
    const key = uid("key");
    const id = uid("order");
    await server.request("POST", `/api/v1/stores/${tenant.store.id}/orders`, { key: tenant.key, body: order(id) });
    const patch = () => server.request("PATCH", `/api/v1/stores/${tenant.store.id}/orders/${id}`, { key: tenant.key, body: { financial_status: "paid" }, headers: { "Idempotency-Key": key } });
    expect((await patch()).status).toBe(200);
    expect((await patch()).headers.get("idempotent-replayed")).toBe("true");
    const erase = () => server.request("DELETE", `/api/v1/stores/${tenant.store.id}/customers/nobody`, { key: tenant.key, headers: { "Idempotency-Key": uid("del") } });
    expect((await erase()).status).toBe(204);
    const other = await server.createTenant();
    const elsewhere = await server.request("POST", `/api/v1/stores/${other.store.id}/orders`, { key: other.key, body: order(id), headers: { "Idempotency-Key": key } });
    expect(elsewhere.status).toBe(201);
    const malformed = await post("orders", order(uid("order")), "has space");
    expect(malformed.status).toBe(422);
    expect(malformed.body.details).toEqual([{ path: "Idempotency-Key", message: "must be 1 to 255 printable ASCII characters without spaces" }]);
  });
});
