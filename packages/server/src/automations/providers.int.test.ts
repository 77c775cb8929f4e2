import { createHmac } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { operatorWebhook } from "./providers.js";
import { jobsFor, newPhone, order } from "../../test/automations.js";
import { ADMIN_TOKEN, startTestServer, uid } from "../../test/helpers.js";

type Received = { id: string; body: string; headers: http.IncomingHttpHeaders; at: number };

async function receiver(respond: (count: number) => number) {
  const received: Received[] = [];
  const http_ = http.createServer((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk.toString()));
    req.on("end", () => {
      received.push({ id: String(req.headers["x-message-id"]), body, headers: req.headers, at: Date.now() });
      res.statusCode = respond(received.length);
      res.end();
    });
  });
  await new Promise<void>((resolve) => http_.listen(0, "127.0.0.1", () => resolve()));
  return { url: `http://127.0.0.1:${(http_.address() as AddressInfo).port}/hooks`, received, close: () => new Promise<void>((resolve) => http_.close(() => resolve())) };
}

describe("webhook provider", () => {
  const secret = "whsec_test_0123456789abcdef";

  it("POSTs each message signed with HMAC-SHA256 over timestamp and raw body, with a stable id", async () => {
    const hook = await receiver(() => 200);
    const hooked = await startTestServer({ worker: { provider: operatorWebhook({ url: hook.url, secret, timeoutMs: 2000 }) } });
    try {
      const t = await hooked.createTenant();
      const body = order(newPhone());
      await hooked.request("POST", `/api/v1/stores/${t.store.id}/orders`, { key: t.key, body });
      await expect.poll(() => hook.received.length).toBeGreaterThanOrEqual(2);
      for (const delivery of hook.received) {
        const signature = String(delivery.headers["x-signature"]);
        const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(signature);
        expect(match).not.toBeNull();
        const expected = createHmac("sha256", secret).update(`${match?.[1]}.${delivery.body}`).digest("hex");
        expect(match?.[2]).toBe(expected);
        expect(Math.abs(Date.now() / 1000 - Number(match?.[1]))).toBeLessThan(60);
        const payload = JSON.parse(delivery.body);
        expect(payload.id).toBe(delivery.id);
        expect(delivery.headers["content-type"]).toBe("application/json");
      }
      const postPurchase = hook.received.map((d) => JSON.parse(d.body)).find((p) => p.flow === "post_purchase");
      expect(postPurchase).toMatchObject({ store_id: t.store.id, to: body.customer.phone, content: { order: { external_id: body.external_id } } });
      const [row] = await hooked.db.selectFrom("messages").select("id").where("id", "=", postPurchase.id).execute();
      expect(row).toBeDefined();
    } finally {
      await hooked.close();
      await hook.close();
    }
  });

  it("retries a failing endpoint with growing backoff, then ends failed and visible with its error", async () => {
    const hook = await receiver(() => 500);
    const hooked = await startTestServer({
      worker: { provider: operatorWebhook({ url: hook.url, secret, timeoutMs: 2000 }), maxAttempts: 4, backoffBaseMs: 200, backoffMaxMs: 5000 },
    });
    try {
      const t = await hooked.createTenant();
      const id = uid("failing");
      await hooked.request("POST", `/api/v1/stores/${t.store.id}/customers`, { key: t.key, body: { external_id: id, phone: newPhone() } });
      await expect.poll(async () => (await jobsFor("contact_sync", id, hooked.db))[0]?.status).toBe("failed");
      expect(hook.received).toHaveLength(4);
      expect(new Set(hook.received.map((d) => d.id)).size).toBe(1);
      const gaps = hook.received.slice(1).map((d, i) => d.at - (hook.received[i]?.at ?? 0));
      expect(gaps[0]).toBeGreaterThanOrEqual(90);
      expect(gaps[2]).toBeGreaterThan(gaps[0] ?? 0);
      const [job] = await jobsFor("contact_sync", id, hooked.db);
      expect(job).toMatchObject({ attempts: 4, last_error: "webhook answered 500" });

      const activity = await hooked.request("GET", `/admin/v1/stores/${t.store.id}/activity`, { key: ADMIN_TOKEN });
      expect(activity.status).toBe(200);
      expect(activity.body.runs[0]).toMatchObject({ flow: "contact_sync", record_external_id: id, status: "failed", attempts: 4, error: "webhook answered 500" });
      expect(activity.body.messages[0]).toMatchObject({ flow: "contact_sync", status: "failed", run_id: job?.id });
    } finally {
      await hooked.close();
      await hook.close();
    }
  });
});
