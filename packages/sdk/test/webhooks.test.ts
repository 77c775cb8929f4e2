import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { verifyWebhook, WebhookVerificationError } from "../src/index.js";

const secret = "whsec_0123456789abcdef";
const body = JSON.stringify({ id: "m1", store_id: 1, flow: "post_purchase", to: "+14155552671", content: {}, created_at: "2026-11-22T09:30:00.000+00:00" });
const sign = (t: number, payload = body, key = secret) => `t=${t},v1=${createHmac("sha256", key).update(`${t}.${payload}`).digest("hex")}`;
const now = 1_800_000_000;

describe("verifyWebhook", () => {
  it("returns the message when the signature matches", () => {
    expect(verifyWebhook(body, sign(now), secret, { now })).toMatchObject({ id: "m1", flow: "post_purchase" });
    expect(verifyWebhook(Buffer.from(body), sign(now), secret, { now }).id).toBe("m1");
  });

  it.each([
    ["a missing header", undefined],
    ["a malformed header", "v1=abc"],
    ["another secret", sign(now, body, "whsec_other_secret_000")],
    ["a tampered body", sign(now, body.replace("m1", "m2"))],
    ["an old signature", sign(now - 301)],
  ])("refuses %s", (_name, header) => {
    expect(() => verifyWebhook(body, header, secret, { now })).toThrow(WebhookVerificationError);
  });
});
