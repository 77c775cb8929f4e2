import { createHmac } from "node:crypto";
import dns from "node:dns";
import http from "node:http";
import https from "node:https";
import net from "node:net";
import type { LookupFunction } from "node:net";
import type { WebhookMessage } from "@commerce-ingest/shared";

/** A message as it leaves the service, in whichever way the provider carries it. */
export type OutboundMessage = WebhookMessage;

/** What an endpoint answered a delivery (or why there was no answer), as the console shows it. */
export type DeliveryAnswer = {
  url: string;
  /** The HTTP status answered; null when no answer came (refused address, connection error, timeout). */
  status: number | null;
  /** The answer's body, its first `ANSWER_CHARS` characters. */
  answer: string | null;
  error: string | null;
  durationMs: number;
};

/** A delivery the endpoint did not take; the job is retried with backoff. */
export class DeliveryFailed extends Error {
  constructor(readonly answer: DeliveryAnswer) {
    super(answer.error ?? `webhook answered ${answer.status}`);
    this.name = "DeliveryFailed";
  }
}

export interface MessagingProvider {
  readonly name: string;
  /**
   * False when delivery is local bookkeeping (the database row is the message):
   * the worker then delivers inside the job's transaction and finishes the job
   * with it. True when delivery leaves the process and may fail or be slow.
   */
  readonly external: boolean;
  /**
   * Resolves once the message got through, with the endpoint's answer when it has one; throws when it did not
   * (a `DeliveryFailed` carries the answer), and the job is then retried with backoff.
   */
  deliver(message: OutboundMessage): Promise<DeliveryAnswer | void>;
}

/**
 * The default: the database row is the message, recorded with the job's end in
 * one transaction; nothing more leaves the process. The worker's line for the
 * run ("automation succeeded") names the message, its store and its flow.
 */
export function recordingProvider(): MessagingProvider {
  return {
    name: "record",
    external: false,
    deliver: () => Promise.resolve(undefined),
  };
}

export const SIGNATURE_HEADER = "X-Signature";
export const MESSAGE_ID_HEADER = "X-Message-Id";

/** How much of an endpoint's answer is kept: enough to read its error, not a page it serves. */
export const ANSWER_CHARS = 1024;

/** `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`, the scheme the SDK's verifier checks. */
export function signPayload(secret: string, rawBody: string, timestamp: number): string {
  return signWith([secret], rawBody, timestamp);
}

/** One `v1` per secret (a rolled secret's overlap): a receiver that knows either accepts the delivery. */
function signWith(secrets: readonly string[], rawBody: string, timestamp: number): string {
  const signatures = secrets.map((secret) => `v1=${createHmac("sha256", secret).update(`${timestamp}.${rawBody}`).digest("hex")}`);
  return [`t=${timestamp}`, ...signatures].join(",");
}

/**
 * Addresses a store's endpoint may not reach unless the operator allows it
 * (`WEBHOOK_ALLOW_PRIVATE_ADDRESSES`): loopback, private, link-local, shared
 * (carrier-grade NAT), unspecified and unique-local, in IPv4 and IPv6.
 */
const PRIVATE = new net.BlockList();
for (const [network, prefix] of [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.168.0.0", 16],
] as const) {
  PRIVATE.addSubnet(network, prefix, "ipv4");
}
for (const [network, prefix] of [
  ["::", 128],
  ["::1", 128],
  ["fc00::", 7],
  ["fe80::", 10],
] as const) {
  PRIVATE.addSubnet(network, prefix, "ipv6");
}

/** Whether an IP address is one a store's endpoint may not reach (an IPv4 address mapped into IPv6 as itself). */
export function isPrivateAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  if (mapped) return PRIVATE.check(mapped, "ipv4");
  const family = net.isIP(address);
  if (family === 0) return true;
  return PRIVATE.check(address, family === 4 ? "ipv4" : "ipv6");
}

export const PRIVATE_ADDRESS_REFUSED = "the endpoint's address is loopback, private or link-local";

/**
 * Name resolution that refuses private addresses: checked on the addresses the
 * connection will use, so a name that resolves elsewhere later (DNS rebinding)
 * is caught at each delivery, not only when the endpoint was set.
 */
const guardedLookup: LookupFunction = (hostname, options, callback) => {
  dns.lookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return callback(error, "", 0);
    if (addresses.some(({ address }) => isPrivateAddress(address))) return callback(Object.assign(new Error(PRIVATE_ADDRESS_REFUSED), { code: "EPRIVATE" }), "", 0);
    if (options.all) return (callback as unknown as (error: null, addresses: dns.LookupAddress[]) => void)(null, addresses);
    const [first] = addresses;
    if (!first) return callback(Object.assign(new Error(`${hostname} has no address`), { code: "ENOTFOUND" }), "", 0);
    callback(null, first.address, first.family);
  });
};

export type WebhookOptions = {
  url: string;
  /** The secrets a delivery is signed with (the current one first); read at each delivery. */
  secrets: () => readonly string[];
  timeoutMs: number;
  /** Loopback, private and link-local addresses allowed (the operator's own endpoint, or a setting). */
  allowPrivate: boolean;
};

/**
 * POSTs a JSON body to an endpoint, signed: at most `timeoutMs` in all, no
 * redirect followed, the answer's first `ANSWER_CHARS` characters kept (the
 * rest drained so the connection can be reused).
 */
export async function postSigned(options: WebhookOptions, body: string, headers: Record<string, string>): Promise<DeliveryAnswer> {
  const started = performance.now();
  const answered = (status: number | null, answer: string | null, error: string | null): DeliveryAnswer => ({
    url: options.url,
    status,
    answer,
    error,
    durationMs: Math.round(performance.now() - started),
  });
  const url = new URL(options.url);
  const literal = url.hostname.replace(/^\[|\]$/g, "");
  if (!options.allowPrivate && net.isIP(literal) !== 0 && isPrivateAddress(literal)) return answered(null, null, PRIVATE_ADDRESS_REFUSED);
  const signature = signWith(options.secrets(), body, Math.floor(Date.now() / 1000));
  return new Promise<DeliveryAnswer>((resolve) => {
    const request = (url.protocol === "https:" ? https : http).request(
      url,
      {
        method: "POST",
        headers: {
          "Content-Type": "application/json",
          "Content-Length": String(Buffer.byteLength(body)),
          "User-Agent": "commerce-ingest-webhooks/1",
          ...headers,
          [SIGNATURE_HEADER]: signature,
        },
        signal: AbortSignal.timeout(options.timeoutMs),
        ...(options.allowPrivate ? {} : { lookup: guardedLookup }),
      },
      (response) => {
        let answer = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => {
          if (answer.length < ANSWER_CHARS) answer += chunk.slice(0, ANSWER_CHARS - answer.length);
        });
        response.on("end", () => resolve(answered(response.statusCode ?? null, answer, null)));
        response.on("error", (error) => resolve(answered(response.statusCode ?? null, answer, describeError(error, options.timeoutMs))));
      },
    );
    request.on("error", (error) => resolve(answered(null, null, describeError(error, options.timeoutMs))));
    request.end(body);
  });
}

function describeError(error: Error & { code?: string }, timeoutMs: number): string {
  if (error.name === "AbortError" || error.code === "ABORT_ERR") return `no answer within ${timeoutMs} ms`;
  if (error.code === "EPRIVATE") return PRIVATE_ADDRESS_REFUSED;
  return error.code ? `${error.code}: ${error.message}` : error.message;
}

/** A 2xx took the message; anything else (a redirect too: none is followed) did not. */
const tookIt = (answer: DeliveryAnswer) => answer.status !== null && answer.status >= 200 && answer.status < 300;

/**
 * POSTs each message as JSON to a URL, signed. The message id is stable across
 * retries (also in `X-Message-Id`), so a receiver can drop a repeat.
 */
export function webhookProvider(options: WebhookOptions): MessagingProvider {
  return {
    name: "webhook",
    external: true,
    async deliver(message) {
      const answer = await postSigned(options, JSON.stringify(message), { [MESSAGE_ID_HEADER]: message.id });
      if (!tookIt(answer)) throw new DeliveryFailed(answer);
      return answer;
    },
  };
}

/** The operator's endpoint from the environment: its one secret, any address (the operator chose it). */
export function operatorWebhook(options: { url: string; secret: string; timeoutMs: number }): MessagingProvider {
  return webhookProvider({ url: options.url, secrets: () => [options.secret], timeoutMs: options.timeoutMs, allowPrivate: true });
}
