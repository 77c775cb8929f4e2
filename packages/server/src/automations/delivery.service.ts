import { randomBytes, randomUUID } from "node:crypto";
import dns from "node:dns/promises";
import net from "node:net";
import { inTransaction, formatTimestamp } from "../db/sql.js";
import type { Db, Executor } from "../db/types.js";
import { AppError } from "../errors.js";
import * as endpoints from "./endpoints.repository.js";
import { attemptsOf } from "./endpoints.repository.js";
import { listStoreMessages, lockMessage, requeueFailed, type MessageFilter } from "./messages.repository.js";
import { isPrivateAddress, MESSAGE_ID_HEADER, postSigned, type DeliveryAnswer } from "./providers.js";

/** How a store's own endpoint is reached: a delivery's timeout, and whether private addresses may be one. */
export type EndpointSettings = { timeoutMs: number; allowPrivate: boolean };

/** A message id that cannot be one (not a UUID) names no message: 404, as an unknown one. */
export class MessageNotFound extends AppError {
  constructor() {
    super("MESSAGE_NOT_FOUND");
  }
}

/** Where no setting says otherwise (a worker or console built without the environment's): as deployed by default. */
export const DEFAULT_ENDPOINT_SETTINGS: EndpointSettings = { timeoutMs: 10_000, allowPrivate: false };

/** How long a rolled secret stays valid beside the new one, unless asked otherwise. */
export const SECRET_OVERLAP_HOURS = 24;

const newSecret = () => `whsec_${randomBytes(24).toString("hex")}`;

/**
 * An endpoint's URL as a store may set it: http or https, no credentials, and
 * (unless the operator allows it) a host that is not, and does not resolve to,
 * a loopback, private or link-local address.
 */
export async function checkEndpointUrl(text: string, allowPrivate: boolean): Promise<string> {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new AppError("ENDPOINT_INVALID");
  }
  if ((url.protocol !== "https:" && url.protocol !== "http:") || url.username !== "" || url.password !== "" || url.hash !== "") throw new AppError("ENDPOINT_INVALID");
  const host = url.hostname.replace(/^\[|\]$/g, "");
  const addresses = net.isIP(host) !== 0 ? [host] : await dns.lookup(host, { all: true }).then((found) => found.map(({ address }) => address), () => []);
  if (addresses.length === 0) throw new AppError("ENDPOINT_INVALID");
  if (!allowPrivate && addresses.some(isPrivateAddress)) throw new AppError("ENDPOINT_ADDRESS_REFUSED");
  return url.toString();
}

export type EndpointView = {
  url: string;
  /** Until when the secret replaced by the last roll is still accepted; null when none is. */
  previous_valid_until: string | null;
  created_at: string;
  updated_at: string;
} | null;

export async function endpointOf(db: Executor, storeId: number): Promise<EndpointView> {
  const row = await endpoints.findEndpoint(db, storeId);
  if (!row) return null;
  const overlap = row.previous_until && row.previous_until > new Date() ? formatTimestamp(row.previous_until) : null;
  return { url: row.url, previous_valid_until: overlap, created_at: formatTimestamp(row.created_at), updated_at: formatTimestamp(row.updated_at) };
}

/** Sets the store's endpoint; a new one gets its signing secret, answered here once and never again. */
export async function setEndpoint(db: Db, storeId: number, url: string, settings: EndpointSettings): Promise<{ created: boolean; secret: string | null }> {
  const checked = await checkEndpointUrl(url, settings.allowPrivate);
  const secret = newSecret();
  const created = await endpoints.putEndpoint(db, storeId, checked, secret);
  return { created, secret: created ? secret : null };
}

/** A new signing secret, answered once; the one it replaces is still accepted for `overlapHours`. */
export async function rollEndpointSecret(db: Db, storeId: number, overlapHours: number): Promise<{ secret: string; previous_valid_until: string }> {
  const secret = newSecret();
  if (!(await endpoints.rollSecret(db, storeId, secret, Math.round(overlapHours * 3600)))) throw new AppError("ENDPOINT_NOT_FOUND");
  return { secret, previous_valid_until: formatTimestamp(new Date(Date.now() + overlapHours * 3600_000)) };
}

export async function removeEndpoint(db: Db, storeId: number): Promise<void> {
  if (!(await endpoints.deleteEndpoint(db, storeId))) throw new AppError("ENDPOINT_NOT_FOUND");
}

/**
 * A test event to the store's endpoint, signed as a message is, answered with
 * what the endpoint said (kept among its deliveries). Its `flow` is `test`: a
 * receiver tells it from a message by that, and by its id's `test_` prefix.
 */
export async function sendTestEvent(db: Db, storeId: number, settings: EndpointSettings): Promise<DeliveryAnswer> {
  const endpoint = await endpoints.endpointForDelivery(db, storeId);
  if (!endpoint) throw new AppError("ENDPOINT_NOT_FOUND");
  const event = {
    id: `test_${randomUUID()}`,
    store_id: storeId,
    flow: "test",
    to: null,
    content: { template: "test", text: "A test event from the console: your endpoint receives messages." },
    created_at: formatTimestamp(new Date()),
  };
  const answer = await postSigned({ url: endpoint.url, secrets: () => endpoint.secrets, timeoutMs: settings.timeoutMs, allowPrivate: settings.allowPrivate }, JSON.stringify(event), {
    [MESSAGE_ID_HEADER]: event.id,
  });
  await endpoints.recordAttempt(db, storeId, null, answer);
  return answer;
}

type Attempt = Awaited<ReturnType<typeof attemptsOf>>[number];

/** An attempt as the console shows it. */
export const toAttempt = (attempt: Attempt) => ({
  id: Number(attempt.id),
  message_id: attempt.message_id,
  url: attempt.url,
  at: formatTimestamp(attempt.attempted_at),
  duration_ms: attempt.duration_ms,
  status: attempt.status,
  answer: attempt.answer,
  error: attempt.error,
});

/** A store's messages with their runs and every attempt to deliver each, newest first, `limit` a page. */
export async function storeMessages(db: Executor, storeId: number, limit: number, filter: MessageFilter) {
  const rows = await listStoreMessages(db, storeId, limit + 1, filter);
  const page = rows.slice(0, limit);
  const attempts = await attemptsOf(db, page.map((row) => row.id));
  const byMessage = new Map<string, Attempt[]>();
  for (const attempt of attempts) byMessage.set(attempt.message_id ?? "", [...(byMessage.get(attempt.message_id ?? "") ?? []), attempt]);
  const last = page.at(-1);
  return {
    messages: page.map((row) => ({
      id: row.id,
      flow: row.flow,
      status: row.status,
      to_phone: row.to_phone,
      content: row.content as Record<string, unknown>,
      provider: row.provider,
      created_at: formatTimestamp(row.created_at),
      sent_at: row.sent_at ? formatTimestamp(row.sent_at) : null,
      run: {
        id: Number(row.run_id),
        status: row.run_status,
        attempts: row.attempts,
        last_error: row.last_error,
        // When the worker tries again: only while the run waits for its next try.
        next_try_at: row.run_status === "pending" && row.status === "pending" ? formatTimestamp(row.run_at) : null,
        record_type: row.record_type,
        record_external_id: row.record_external_id,
      },
      customer_external_id: row.customer_external_id,
      attempts: (byMessage.get(row.id) ?? []).map(toAttempt),
    })),
    /** The cursor of the next page (`before`), null on the last. */
    next: rows.length > limit && last ? last.id : null,
  };
}

/**
 * Sends a failed message again: its run due now with its attempts afresh, the
 * same message (same id) delivered. A message that is not failed (sent, or
 * already due again) is left as it is: `resent` false.
 */
export async function resendMessage(db: Db, storeId: number, messageId: string): Promise<{ resent: boolean }> {
  return inTransaction(db, async (trx) => {
    const message = await lockMessage(trx, storeId, messageId);
    if (!message) throw new AppError("MESSAGE_NOT_FOUND");
    if (message.status !== "failed" || message.run_status !== "failed") return { resent: false };
    await requeueFailed(trx, Number(message.job_id), message.id);
    return { resent: true };
  });
}
