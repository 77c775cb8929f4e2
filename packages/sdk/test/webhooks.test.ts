import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { signWebhookForTest, verifyWebhook, WebhookVerificationError, type WebhookMessage } from "../src/index.js";

const secret = "whsec_0123456789abcdef";
const body = JSON.stringify({ id: "m1", store_id: 1, flow: "post_purchase", to: "+14155552671", content: {}, created_at: "2026-11-22T09:30:00.000+00:00" });
const sign = (t: number, payload = body, key = secret) => `t=${t},v1=${createHmac("sha256", key).update(`${t}.${payload}`).digest("hex")}`;
const now = 1_800_000_000;

describe("verifyWebhook", () => {
  it("returns the message when the signature matches", async () => {
    expect(await verifyWebhook(body, sign(now), secret, { now })).toMatchObject({ id: "m1", flow: "post_purchase" });
    expect((await verifyWebhook(new TextEncoder().encode(body), sign(now), secret, { now })).id).toBe("m1");
  });

  it.each([
    ["a missing header", undefined],
    ["a malformed header", "v1=abc"],
    ["another secret", sign(now, body, "whsec_other_secret_000")],
    ["a tampered body", sign(now, body.replace("m1", "m2"))],
    ["an old signature", sign(now - 301)],
    ["a signature that is not hex", `t=${now},v1=${"z".repeat(64)}`],
    ["a signature cut short", sign(now).slice(0, -2)],
  ])("refuses %s", async (_name, header) => {
    await expect(verifyWebhook(body, header, secret, { now })).rejects.toThrow(WebhookVerificationError);
  });
});

describe("signWebhookForTest", () => {
  const message: WebhookMessage = {
    id: "m2",
    store_id: 1,
    flow: "shipping_notification",
    to: "+14155552671",
    content: {
      template: "shipping_notification",
      first_name: "Ada",
      order: { external_id: "1001" },
      shipment: { external_id: "s1", status: "in_transit", carrier: "UPS", tracking_number: "1Z999", tracking_url: "https://ups.example/1Z999" },
    },
    created_at: "2026-11-22T09:30:00.000+00:00",
  };

  it("signs as the service does: verifyWebhook accepts it and gives the typed message back", async () => {
    const { body: signed, headers } = await signWebhookForTest(message, secret, { timestamp: now });
    expect(headers).toEqual({ "Content-Type": "application/json", "X-Message-Id": "m2", "X-Signature": sign(now, signed) });
    const received = await verifyWebhook(signed, headers["X-Signature"], secret, { now });
    // The union narrows on `flow`: the content's fields are typed per flow.
    const tracking = received.flow === "shipping_notification" ? received.content.shipment.tracking_number : undefined;
    expect(tracking).toBe("1Z999");
    await expect(verifyWebhook(signed, (await signWebhookForTest(message, "whsec_other_secret_000")).headers["X-Signature"], secret)).rejects.toThrow(WebhookVerificationError);
  });
});
