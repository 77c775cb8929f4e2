import { createHash } from "node:crypto";
import { AppError } from "../errors.js";
import { toErrorResponse } from "../error-response.js";
import type { Context, IdempotencyRequest } from "../context.js";
import * as repo from "./idempotency.repository.js";

/** How long a first response is replayed, and when a claim whose request never finished may be taken over. */
export const IDEMPOTENCY_TTL_SECONDS = 24 * 3600;
const STALE_CLAIM_SECONDS = 60;
const KEY = /^[\x21-\x7E]{1,255}$/;

export type { IdempotencyRequest };

/** The request's `Idempotency-Key`, and a SHA-256 of its method, path and body. */
export function idempotencyRequestOf(header: string | string[] | undefined, method: string, path: string, body: unknown): IdempotencyRequest | undefined {
  if (header === undefined) return undefined;
  if (typeof header !== "string" || !KEY.test(header)) return { invalidKey: true };
  const hash = createHash("sha256").update(`${method} ${path}\n`);
  if (Buffer.isBuffer(body)) hash.update(body);
  return { key: header, fingerprint: hash.digest("hex") };
}

/** A response stored for a key, answered again exactly: status, body and the first request's id. */
export class ReplayedResponse extends Error {
  constructor(
    readonly status: number,
    readonly body: string | null,
    readonly requestId: string,
  ) {
    super("replayed response");
  }
}

/** What a procedure's run came to, as tRPC's middleware chain reports it. */
type Outcome = { ok: true; data: unknown } | { ok: false; error: unknown };

/**
 * POST, PATCH and DELETE with an `Idempotency-Key` run once per (store, key)
 * for 24 hours: a repeat gets the first response again (marked
 * `Idempotent-Replayed: true`), the key with another request a 422, a repeat
 * while the first still runs a 409. A 5xx is not kept: the retry runs again.
 * `run` is the rest of the request, after authorization; a refusal it throws
 * is kept as its answer like one it returns.
 */
export async function runOnce<R extends Outcome>(ctx: Context, type: string, run: () => Promise<R>): Promise<R> {
  const request = ctx.idempotency;
  const storeId = ctx.response.authorized?.storeId;
  if (type !== "mutation" || request === undefined || storeId === undefined) return run();
  if ("invalidKey" in request) throw new AppError("VALIDATION_FAILED", [{ path: "Idempotency-Key", message: "must be 1 to 255 printable ASCII characters without spaces" }]);

  const claimed = await repo.claimKey(ctx.db, { store_id: storeId, key: request.key, fingerprint: request.fingerprint, request_id: ctx.requestId }, IDEMPOTENCY_TTL_SECONDS, STALE_CLAIM_SECONDS);
  if (!claimed) {
    const stored = await repo.findKey(ctx.db, storeId, request.key);
    if (stored && stored.fingerprint !== request.fingerprint) throw new AppError("IDEMPOTENCY_KEY_REUSED", [{ path: "Idempotency-Key", message: "was first used with another request" }]);
    if (!stored || stored.status === null) throw new AppError("REQUEST_IN_PROGRESS", undefined, { "Retry-After": "1" });
    throw new ReplayedResponse(stored.status, stored.body, stored.request_id);
  }

  const failed = async (error: unknown) => {
    const response = toErrorResponse(error);
    if (response.status < 500) await repo.completeKey(ctx.db, storeId, request.key, response.status, JSON.stringify(response.body));
    else await repo.releaseKey(ctx.db, storeId, request.key).catch(() => undefined);
  };
  let result: R;
  try {
    result = await run();
  } catch (error) {
    await failed(error);
    throw error;
  }
  if (result.ok) {
    const status = ctx.response.status;
    await repo.completeKey(ctx.db, storeId, request.key, status, status === 204 ? null : JSON.stringify(result.data));
  } else {
    await failed(result.error);
  }
  return result;
}
