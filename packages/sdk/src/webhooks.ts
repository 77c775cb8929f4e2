import { createHmac, timingSafeEqual } from "node:crypto";
import { CommerceIngestError } from "./errors.js";
import type { WebhookMessage } from "./types.js";

export class WebhookVerificationError extends CommerceIngestError {
  override readonly name = "WebhookVerificationError";
}

export type VerifyOptions = {
  /** How old a signature may be, in seconds (default 300): older ones are replays. */
  toleranceSeconds?: number;
  /** The current time in seconds, for tests. */
  now?: number;
};

/**
 * Checks the `X-Signature` header of a webhook delivery against the raw body
 * and returns the parsed message. Pass the body exactly as received (before any
 * JSON parsing): the signature covers its bytes.
 *
 * @throws WebhookVerificationError when the signature is missing, wrong or too old.
 */
export function verifyWebhook(
  payload: string | Uint8Array,
  signatureHeader: string | null | undefined,
  secret: string,
  options: VerifyOptions = {},
): WebhookMessage {
  if (!signatureHeader) throw new WebhookVerificationError("No signature header");
  const parts = signatureHeader.split(",").map((part) => part.trim().split("="));
  const timestamp = Number(parts.find(([key]) => key === "t")?.[1]);
  const signatures = parts.filter(([key]) => key === "v1").map(([, value]) => value ?? "");
  if (!Number.isInteger(timestamp) || signatures.length === 0) throw new WebhookVerificationError("Malformed signature header");

  const body = typeof payload === "string" ? payload : Buffer.from(payload).toString("utf8");
  const expected = createHmac("sha256", secret).update(`${timestamp}.${body}`).digest();
  const matches = signatures.some((signature) => {
    const given = Buffer.from(signature, "hex");
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!matches) throw new WebhookVerificationError("Signature does not match");

  const now = options.now ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - timestamp) > (options.toleranceSeconds ?? 300)) throw new WebhookVerificationError("Signature is too old");
  return JSON.parse(body) as WebhookMessage;
}

/** What `signWebhookForTest` gives: the body to send and the headers the service would send with it. */
export type SignedWebhook = {
  /** The JSON body, exactly as signed. */
  body: string;
  headers: { "Content-Type": "application/json"; "X-Message-Id": string; "X-Signature": string };
};

/**
 * Signs a message as the service's messaging webhook does, for testing your
 * receiver: post `body` with `headers` to it, and `verifyWebhook` accepts it.
 *
 * ```ts
 * const { body, headers } = signWebhookForTest(message, process.env.MESSAGING_WEBHOOK_SECRET!);
 * await fetch("http://localhost:4000/webhooks/messages", { method: "POST", body, headers });
 * ```
 */
export function signWebhookForTest(payload: WebhookMessage | string, secret: string, options: { timestamp?: number } = {}): SignedWebhook {
  const body = typeof payload === "string" ? payload : JSON.stringify(payload);
  const timestamp = options.timestamp ?? Math.floor(Date.now() / 1000);
  const signature = createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex");
  const parsed = typeof payload === "string" ? (JSON.parse(payload) as { id?: unknown }) : payload;
  const id = typeof parsed.id === "string" ? parsed.id : "";
  return { body, headers: { "Content-Type": "application/json", "X-Message-Id": id, "X-Signature": `t=${timestamp},v1=${signature}` } };
}
