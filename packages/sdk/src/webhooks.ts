import { CommerceIngestError } from "./errors.js";
import type { WebhookMessage } from "./types.js";

export class WebhookVerificationError extends CommerceIngestError {
  override readonly name = "WebhookVerificationError";

  constructor(message: string) {
    super(message, { code: "webhook_signature_invalid" });
  }
}

export type VerifyOptions = {
  /** How old a signature may be, in seconds (default 300): older ones are replays. */
  toleranceSeconds?: number | undefined;
  /** The current time in seconds, for tests. */
  now?: number | undefined;
};

const encoder = new TextEncoder();

/** The HMAC-SHA256 key of a secret, through Web Crypto: the same in Node.js, Deno, Bun, edge runtimes and browsers. */
function hmacKey(secret: string, usage: "sign" | "verify") {
  return crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, [usage]);
}

/** Hex digits as bytes; undefined when they are not hex of whole bytes. */
function fromHex(hex: string): Uint8Array | undefined {
  if (hex.length % 2 !== 0 || !/^[0-9a-f]*$/i.test(hex)) return undefined;
  const bytes = new Uint8Array(hex.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return bytes;
}

const toHex = (bytes: ArrayBuffer) => Array.from(new Uint8Array(bytes), (byte) => byte.toString(16).padStart(2, "0")).join("");

/**
 * Checks the `X-Signature` header of a webhook delivery against the raw body
 * and returns the parsed message. Pass the body exactly as received (before any
 * JSON parsing): the signature covers its bytes. The comparison is Web
 * Crypto's own, in constant time.
 *
 * @throws WebhookVerificationError when the signature is missing, wrong or too old.
 */
export async function verifyWebhook(
  payload: string | Uint8Array,
  signatureHeader: string | null | undefined,
  secret: string,
  options: VerifyOptions = {},
): Promise<WebhookMessage> {
  if (!signatureHeader) throw new WebhookVerificationError("No signature header");
  const parts = signatureHeader.split(",").map((part) => part.trim().split("="));
  const timestamp = Number(parts.find(([key]) => key === "t")?.[1]);
  const signatures = parts.filter(([key]) => key === "v1").map(([, value]) => value ?? "");
  if (!Number.isInteger(timestamp) || signatures.length === 0) throw new WebhookVerificationError("Malformed signature header");

  const body = typeof payload === "string" ? payload : new TextDecoder().decode(payload);
  const key = await hmacKey(secret, "verify");
  const signed = encoder.encode(`${timestamp}.${body}`);
  let matches = false;
  for (const signature of signatures) {
    const given = fromHex(signature);
    if (given && given.length === 32 && (await crypto.subtle.verify("HMAC", key, given, signed))) matches = true;
  }
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
 * const { body, headers } = await signWebhookForTest(message, process.env.MESSAGING_WEBHOOK_SECRET!);
 * await fetch("http://localhost:4000/webhooks/messages", { method: "POST", body, headers });
 * ```
 */
export async function signWebhookForTest(payload: WebhookMessage | string, secret: string, options: { timestamp?: number } = {}): Promise<SignedWebhook> {
  const body = typeof payload === "string" ? payload : JSON.stringify(payload);
  const timestamp = options.timestamp ?? Math.floor(Date.now() / 1000);
  const signature = toHex(await crypto.subtle.sign("HMAC", await hmacKey(secret, "sign"), encoder.encode(`${timestamp}.${body}`)));
  const parsed = typeof payload === "string" ? (JSON.parse(payload) as { id?: unknown }) : payload;
  const id = typeof parsed.id === "string" ? parsed.id : "";
  return { body, headers: { "Content-Type": "application/json", "X-Message-Id": id, "X-Signature": `t=${timestamp},v1=${signature}` } };
}
