import type { Context } from "../context.js";
import { baseProcedure, middleware, type Meta } from "../trpc.js";
import { AppError, batchTooLarge } from "../errors.js";
import { bearerToken, hashApiKey, looksLikeApiKey, secretsEqual } from "./api-key.js";
import { parseStoreId, type StoreContext } from "./store-context.js";
import { findDeletedKeyCaller, findKeyAccess } from "./tenant.repository.js";
import { LIMITS } from "@commerce-ingest/shared";

function rawStoreId(raw: unknown): unknown {
  return typeof raw === "object" && raw !== null && "store_id" in raw ? raw.store_id : undefined;
}

/**
 * A failed authentication: its 401, unless the address has failed too often
 * lately; then 429, so guessing keys from one address is slowed. A caller with
 * a valid key never pays for this check.
 */
async function refused(ctx: Context, code: "API_KEY_MISSING" | "API_KEY_INVALID"): Promise<AppError> {
  if (ctx.authFailures && ctx.address) {
    const decision = await ctx.authFailures.consume(ctx.address);
    if (!decision.allowed) return new AppError("RATE_LIMITED", undefined, { "Retry-After": String(decision.retryAfterSeconds) });
  }
  return new AppError(code);
}

/**
 * What a request costs against the rate limit: one unit, as a batch of up to
 * 250 records does (`LIMITS.recordsPerRateUnit`; a batch of 1,000 costs 4),
 * so that under the default limit (1,000 a key per 10 s) a key pushes 25,000
 * records a second in batches, and 100 single pushes.
 *
 * A batch over 1,000 records, or one whose cost could never fit the limit, is
 * refused with 422 here, before the limit is consulted: a 429 would tell the
 * caller to retry a request that can never pass.
 */
function rateLimitCost(batch: boolean | undefined, body: Record<string, unknown> | undefined, limit: number | undefined): number {
  const items = batch ? body?.items : undefined;
  if (!Array.isArray(items)) return 1;
  if (items.length > LIMITS.batchItems) throw batchTooLarge();
  const cost = Math.max(1, Math.ceil(items.length / LIMITS.recordsPerRateUnit));
  if (limit !== undefined && cost > limit) {
    throw new AppError("VALIDATION_FAILED", [
      { path: "items", message: `costs ${cost} units of a rate limit of ${limit} a window: send at most ${limit * LIMITS.recordsPerRateUnit} records per batch` },
    ]);
  }
  return cost;
}

/**
 * Every `/api/v1` procedure starts here, in the contract's order: the key (401),
 * the rate limit (429), then the store (403/404). A caller without a valid key
 * learns nothing about stores. Answers the store the request is for.
 */
/** What a key may do with a store, from the process's cache when it has one. */
function accessOf(deps: { db: Context["db"]; accessCache?: Context["accessCache"] }, keyHash: string, storeId: number | undefined) {
  const load = () => findKeyAccess(deps.db, keyHash, storeId);
  return deps.accessCache ? deps.accessCache.get(keyHash, storeId, load) : load();
}

export async function authorize(ctx: Context, rawInput: unknown, meta: Meta | undefined): Promise<{ store: StoreContext; apiKeyId: number }> {
  if (ctx.authorization === undefined) throw await refused(ctx, "API_KEY_MISSING");
  const token = bearerToken(ctx.authorization);
  if (token === undefined || !looksLikeApiKey(token)) throw await refused(ctx, "API_KEY_INVALID");

  const storeId = parseStoreId(rawStoreId(rawInput));
  const keyHash = hashApiKey(token);
  const access = await accessOf(ctx, keyHash, storeId);
  if (!access) {
    // A deleted key of the team that owns the store: the call is the team's to see in its request log.
    const deleted = storeId === undefined ? undefined : await findDeletedKeyCaller(ctx.db, keyHash, storeId);
    if (deleted) ctx.response.caller = { storeId: deleted.store_id, keyId: deleted.key_id };
    throw await refused(ctx, "API_KEY_INVALID");
  }
  // A store of the key's own team: whatever is refused from here on goes to that store's request log.
  if (access.store_id !== null && access.store_team_id === access.key_team_id) ctx.response.caller = { storeId: access.store_id, keyId: access.key_id };

  const cost = rateLimitCost(meta?.contract?.batch, ctx.rawBody, ctx.rateLimiter.limits?.requests);
  const decision = await ctx.rateLimiter.consume(String(access.key_id), cost);
  // Every answer from here on tells the caller where it stands.
  if (decision.state) {
    ctx.response.headers = {
      ...ctx.response.headers,
      "RateLimit-Limit": String(decision.state.limit),
      "RateLimit-Remaining": String(decision.state.remaining),
      "RateLimit-Reset": String(decision.state.resetSeconds),
    };
  }
  if (!decision.allowed) {
    throw new AppError("RATE_LIMITED", undefined, { "Retry-After": String(decision.retryAfterSeconds) });
  }

  if (access.store_id === null || access.store_team_id === null) throw new AppError("STORE_NOT_FOUND");
  if (access.store_team_id !== access.key_team_id) throw new AppError("STORE_FORBIDDEN");
  if (access.key_store_id !== null && access.key_store_id !== access.store_id) throw new AppError("STORE_FORBIDDEN");
  if (access.store_paused) throw new AppError("STORE_NOT_FOUND");

  ctx.response.authorized = { storeId: access.store_id, keyId: access.key_id, logBodies: access.store_log_bodies ?? true };
  const store: StoreContext = {
    id: access.store_id,
    teamId: access.store_team_id,
    country: access.store_country,
    recoveryDelaySeconds: access.store_recovery_delay_seconds ?? 3600,
  };
  return { store, apiKeyId: access.key_id };
}

/**
 * The team's own store and key a call refused before any procedure ran (a body too large, an unknown path
 * under a store) was made with, so the store's request log can show it; nothing for a key that is not the
 * store team's. Reads the key as authorization does (cached), and changes nothing: no rate limit is taken.
 */
export async function callerOf(
  deps: { db: Context["db"]; accessCache?: Context["accessCache"] },
  authorization: string | undefined,
  rawStoreId: string,
): Promise<{ storeId: number; keyId: number } | undefined> {
  const token = authorization === undefined ? undefined : bearerToken(authorization);
  const storeId = parseStoreId(rawStoreId);
  if (token === undefined || !looksLikeApiKey(token) || storeId === undefined) return undefined;
  const access = await accessOf(deps, hashApiKey(token), storeId);
  if (!access || access.store_id === null || access.store_team_id !== access.key_team_id) return undefined;
  return { storeId: access.store_id, keyId: access.key_id };
}

/** Body problems found by the adapter surface only after authorization (and idempotency), as the contract orders. */
export function refuseBodyProblem(ctx: Context): void {
  if (ctx.bodyProblem) throw ctx.bodyProblem;
}

/** For the operator API: its body problems after its admin token. */
const requireJsonBody = middleware(({ ctx, next }) => {
  refuseBodyProblem(ctx);
  return next();
});

/** Loopback addresses: the machine the server runs on. */
export function isLocalAddress(address: string | undefined): boolean {
  return address !== undefined && (address === "::1" || /^(::ffff:)?127\.\d+\.\d+\.\d+$/.test(address));
}

/**
 * The operator API: callers on this machine only (unless ADMIN_REMOTE), and a
 * bearer admin token compared in constant time. To anyone else it does not exist.
 */
export const adminProcedure = baseProcedure.use(({ ctx, next }) => {
  if (!ctx.adminRemote && !isLocalAddress(ctx.address)) throw new AppError("NOT_FOUND");
  if (ctx.authorization === undefined) throw new AppError("ADMIN_TOKEN_MISSING");
  const token = bearerToken(ctx.authorization);
  if (token === undefined || !secretsEqual(token, ctx.adminToken)) throw new AppError("ADMIN_TOKEN_INVALID");
  return next();
});

export const adminBodyProcedure = adminProcedure.use(requireJsonBody);
