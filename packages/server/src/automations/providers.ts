import { createHmac } from "node:crypto";
import type { WebhookMessage } from "@commerce-ingest/shared";

/** A message as it leaves the service, in whichever way the provider carries it. */
export type OutboundMessage = WebhookMessage;

export interface MessagingProvider {
  readonly name: string;
  /**
   * False when delivery is local bookkeeping (the database row is the message):
   * the worker then delivers inside the job's transaction and finishes the job
   * with it. True when delivery leaves the process and may fail or be slow.
   */
  readonly external: boolean;
  /** Throws when the message did not get through; the job is then retried with backoff. */
  deliver(message: OutboundMessage): Promise<void>;
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
    deliver: () => Promise.resolve(),
  };
}

export const SIGNATURE_HEADER = "X-Signature";
export const MESSAGE_ID_HEADER = "X-Message-Id";

/** `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`, the scheme the SDK's verifier checks. */
export function signPayload(secret: string, rawBody: string, timestamp: number): string {
  const digest = createHmac("sha256", secret).update(`${timestamp}.${rawBody}`).digest("hex");
  return `t=${timestamp},v1=${digest}`;
}

/**
 * POSTs each message as JSON to a URL, signed. The message id is stable across
 * retries (also in `X-Message-Id`), so a receiver can drop a repeat.
 */
export function webhookProvider(options: { url: string; secret: string; timeoutMs: number }): MessagingProvider {
  return {
    name: "webhook",
    external: true,
    async deliver(message) {
      const rawBody = JSON.stringify(message);
      const signature = signPayload(options.secret, rawBody, Math.floor(Date.now() / 1000));
      const response = await fetch(options.url, {
        method: "POST",
        headers: {
          "Content-Type": "application/json",
          "User-Agent": "commerce-ingest-webhooks/1",
          [MESSAGE_ID_HEADER]: message.id,
          [SIGNATURE_HEADER]: signature,
        },
        body: rawBody,
        signal: AbortSignal.timeout(options.timeoutMs),
        redirect: "error",
      });
      // Drain the body so the connection can be reused.
      await response.arrayBuffer().catch(() => undefined);
      if (!response.ok) throw new Error(`webhook answered ${response.status}`);
    },
  };
}
