import { createHash, randomBytes, randomInt, randomUUID, timingSafeEqual } from "node:crypto";
import { LIMITS } from "@commerce-ingest/shared";
import { sql } from "kysely";
import { LRUCache } from "lru-cache";
import type pg from "pg";
import { RateLimiterMemory, RateLimiterPostgres, RateLimiterRes, type RateLimiterAbstract } from "rate-limiter-flexible";
import { LISTENER_NAME, type DatabaseHandle, type Notice } from "../db/index.js";
import type { Db } from "../db/types.js";
import { AppError, batchTooLarge } from "../errors.js";
import type { Logger } from "../logger.js";
import { onAccessChange } from "./access-events.js";
import { findDeletedKeyCaller, findKeyAccess } from "./tenant.repository.js";

/*
 * Who is calling and what they may do: API keys (their form, their hash), the
 * store a path names, what a key may do with it (cached in the process,
 * forgotten on any change), the rate limit, and the authorization every
 * `/api/v1` procedure starts with.
 */

// --- API keys and tokens ---

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
export const API_KEY_LENGTH = 24;
const API_KEY_PATTERN = /^[A-Za-z0-9]{24}$/;

/** 24 characters of [A-Za-z0-9] from the CSPRNG (about 143 bits), without modulo bias. */
export function generateApiKey(): string {
  let key = "";
  for (let i = 0; i < API_KEY_LENGTH; i++) key += ALPHABET[randomInt(ALPHABET.length)];
  return key;
}

/** A fast hash is enough: the key is random and long, so there is nothing to brute-force. */
export const hashApiKey = hashToken;

export function looksLikeApiKey(token: string): boolean {
  return API_KEY_PATTERN.test(token);
}

/** Extracts the token of `Bearer <token>`: the scheme in any case, the token exactly as sent. */
export function bearerToken(header: string): string | undefined {
  const match = /^bearer ([\s\S]+)$/i.exec(header);
  return match?.[1];
}

/** Compares secrets in constant time, whatever their lengths. */
export function secretsEqual(a: string, b: string): boolean {
  const digestA = createHash("sha256").update(a).digest();
  const digestB = createHash("sha256").update(b).digest();
  return timingSafeEqual(digestA, digestB);
}

/** 256 random bits, URL-safe: session cookies and invitation links. */
export function randomToken(): string {
  return randomBytes(32).toString("base64url");
}

/** What the database keeps of a token or key: its SHA-256 (the token is random and long, so a fast hash is enough). */
export function hashToken(token: string): string {
  return createHash("sha256").update(token, "utf8").digest("hex");
}

// --- The store a path names ---

/** The store a request is authorized for, as services see it. */
export type StoreContext = {
  id: number;
  teamId: number;
  /** ISO 3166 alpha-2: phones without `+` are read in this country. */
  country: string | null;
  recoveryDelaySeconds: number;
};

/** A positive integer that fits the id column exactly; anything else names no store. */
export function parseStoreId(value: unknown): number | undefined {
  const text = typeof value === "number" ? String(value) : value;
  if (typeof text !== "string" || !/^[1-9][0-9]{0,15}$/.test(text)) return undefined;
  const id = Number(text);
  return Number.isSafeInteger(id) ? id : undefined;
}

// --- What a key may do, remembered ---

export type KeyAccess = Awaited<ReturnType<typeof findKeyAccess>>;

/** How long a change waits for every process to say it has forgotten, before it answers anyway. */
export const ACCESS_SYNC_MS = 2_000;

/** Only a granted access is remembered: a refusal (unknown key, store missing, paused or another team's) is read afresh each time. */
function grants(access: KeyAccess): access is NonNullable<KeyAccess> {
  return (
    access !== undefined &&
    access.store_id !== null &&
    !access.store_paused &&
    access.store_team_id === access.key_team_id &&
    (access.key_store_id === null || access.key_store_id === access.store_id)
  );
}

/**
 * Who may push to which store, remembered per process so a push costs no
 * lookup of its key. The database says when to forget: a trigger notifies
 * `access_changed` at the commit of any change to stores or keys (a key
 * deleted, a store paused), and every process clears its cache then. The
 * cache serves only while that notification channel is up; a short TTL is the
 * safety net on top. Only granted access is cached: a refusal is always read
 * afresh, so a store resumed or created is reachable on the very next request.
 */
export class AccessCache {
  readonly #entries: LRUCache<string, { access: NonNullable<KeyAccess>; expires: number }>;
  #generation = 0;
  #live = false;
  hits = 0;
  misses = 0;

  constructor(
    private readonly ttlMs = 30_000,
    maxEntries = 10_000,
  ) {
    // The least recently used key forgotten first, in constant time (a `Map` evicted from its front walks past every entry deleted before it).
    this.#entries = new LRUCache({ max: maxEntries });
  }

  /** Whether the change notifications arrive: without them nothing is served from memory. */
  setLive(live: boolean): void {
    this.#live = live;
    this.clear();
  }

  /** Everything changed: forget it all, including lookups in flight. */
  clear(): void {
    this.#generation++;
    this.#entries.clear();
  }

  /** A change notification arrived from the database. */
  notified(): void {
    this.clear();
  }

  /** Whether anything is served from memory. */
  get live(): boolean {
    return this.#live;
  }

  async get(keyHash: string, storeId: number | undefined, load: () => Promise<KeyAccess>): Promise<KeyAccess> {
    const id = `${keyHash}:${storeId ?? ""}`;
    const entry = this.#live ? this.#entries.get(id) : undefined;
    if (entry && entry.expires > Date.now()) {
      this.hits++;
      return entry.access;
    }
    this.misses++;
    const generation = this.#generation;
    const access = await load();
    // A change notified while the lookup ran may not be in its answer: keep only answers read after the last change.
    if (grants(access) && this.#live && generation === this.#generation) {
      // A rolled key is remembered no longer than it works.
      this.#entries.set(id, { access, expires: Math.min(Date.now() + this.ttlMs, access.key_expires_at?.getTime() ?? Number.POSITIVE_INFINITY) });
    }
    return access;
  }
}

const CHANGED = "access_changed";
const ACKED = "access_acked";

/**
 * Keeps `cache` true to the database, in every process at once.
 *
 * Each process listens on `access_changed` and clears its cache at every
 * notification. A change made through this process then waits for the others
 * before it is answered: it sends a notification of its own with a fresh
 * token, and waits until every listening connection (found by name in
 * `pg_stat_activity`) has echoed the token back on `access_acked`. PostgreSQL
 * delivers notifications in commit order, so a process that echoes the token
 * has already cleared for the change committed before it: the caller's next
 * request, to any process, reads the change. A process that does not answer
 * within {@link ACCESS_SYNC_MS} is not waited for (its TTL still bounds it).
 */
export async function startAccessSync(database: DatabaseHandle, cache: AccessCache, logger?: Logger): Promise<() => Promise<void>> {
  const waits = new Map<string, { acked: Set<number>; expected: number[] | undefined; settle: () => void }>();
  const check = (token: string) => {
    const wait = waits.get(token);
    if (wait?.expected?.every((pid) => wait.acked.has(pid))) wait.settle();
  };
  const hear = (notice: Notice) => {
    if (notice.channel === CHANGED) {
      cache.notified();
      if (notice.payload) notice.reply(ACKED, notice.payload);
    } else {
      waits.get(notice.payload)?.acked.add(notice.senderPid);
      check(notice.payload);
    }
  };
  const stopListening = await database.listen([CHANGED, ACKED], hear, (live) => cache.setLive(live));

  async function everyProcessTold(): Promise<void> {
    // One process alone on the embedded database: clearing here was all there was to do.
    if (database.kind !== "postgres" || !cache.live) return;
    const token = randomUUID();
    let settle!: () => void;
    const settled = new Promise<void>((resolve) => (settle = resolve));
    const wait = { acked: new Set<number>(), expected: undefined as number[] | undefined, settle };
    waits.set(token, wait);
    const timer = setTimeout(() => {
      logger?.warn({ missing: wait.expected?.filter((pid) => !wait.acked.has(pid)) }, "a process did not confirm an access change in time");
      settle();
    }, ACCESS_SYNC_MS);
    try {
      const { rows } = await sql<{ pids: number[] }>`
        select array(select pid from pg_stat_activity where application_name = ${LISTENER_NAME} and datname = current_database()) as pids,
               pg_notify(${CHANGED}, ${token})`.execute(database.db);
      wait.expected = rows[0]?.pids ?? [];
      check(token);
      await settled;
    } catch {
      // The change is written; without the database nobody can be told, and nobody serves from a cache whose channel is down for long.
    } finally {
      clearTimeout(timer);
      waits.delete(token);
    }
  }

  const stopHearingLocalChanges = onAccessChange(() => {
    cache.clear();
    return everyProcessTold();
  });
  return async () => {
    stopHearingLocalChanges();
    await stopListening();
  };
}

// --- Authorization ---

/** Where a key's access is read: the database, through the process's cache when it has one. */
type AccessDeps = { db: Db; accessCache?: AccessCache | undefined };

/** What authorization reads and sets of a request's context (see `Context`, which is one). */
export type AccessRequest = AccessDeps & {
  rateLimiter: RateLimiter;
  authFailures?: RateLimiter | undefined;
  authorization: string | undefined;
  address: string | undefined;
  rawBody: Record<string, unknown> | undefined;
  response: {
    headers?: Record<string, string>;
    authorized?: { storeId: number; keyId: number; logBodies?: boolean };
    caller?: { storeId: number; keyId: number };
  };
};

function rawStoreId(raw: unknown): unknown {
  return typeof raw === "object" && raw !== null && "store_id" in raw ? raw.store_id : undefined;
}

/**
 * A failed authentication: its 401, unless the address has failed too often
 * lately; then 429, so guessing keys from one address is slowed. A caller with
 * a valid key never pays for this check.
 */
async function refused(ctx: AccessRequest, code: "API_KEY_MISSING" | "API_KEY_INVALID"): Promise<AppError> {
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

/** What a key may do with a store, from the process's cache when it has one. */
function accessOf(deps: AccessDeps, keyHash: string, storeId: number | undefined) {
  const load = () => findKeyAccess(deps.db, keyHash, storeId);
  return deps.accessCache ? deps.accessCache.get(keyHash, storeId, load) : load();
}

/**
 * Every `/api/v1` procedure starts here, in the contract's order: the key (401),
 * the rate limit (429), then the store (403/404). A caller without a valid key
 * learns nothing about stores. Answers the store the request is for.
 */
export async function authorize(ctx: AccessRequest, rawInput: unknown, batch: boolean | undefined): Promise<{ store: StoreContext; apiKeyId: number }> {
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

  const cost = rateLimitCost(batch, ctx.rawBody, ctx.rateLimiter.limits?.requests);
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
  deps: AccessDeps,
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
export function refuseBodyProblem(ctx: { bodyProblem: AppError | undefined }): void {
  if (ctx.bodyProblem) throw ctx.bodyProblem;
}

/** Loopback addresses: the machine the server runs on. */
export function isLocalAddress(address: string | undefined): boolean {
  return address !== undefined && (address === "::1" || /^(::ffff:)?127\.\d+\.\d+\.\d+$/.test(address));
}

// --- The rate limit ---

/** What the caller may still do: the window's limit, what is left of it, and when it resets (absent when there is no limit). */
export type RateLimitState = { limit: number; remaining: number; resetSeconds: number };

export type RateLimitDecision = ({ allowed: true } | { allowed: false; retryAfterSeconds: number }) & { state?: RateLimitState };

export interface RateLimiter {
  /** The limit it applies; undefined when there is none. */
  readonly limits?: RateLimitOptions | undefined;
  /** Spends `points` (default 1) of the key's budget. */
  consume(key: string, points?: number): Promise<RateLimitDecision>;
  /** Forgets what the key has spent (a successful sign-in clears its failures). */
  reset(key: string): Promise<void>;
}

export type RateLimitOptions = { requests: number; windowSeconds: number };

/** Failed authentications an address may make per minute before it is answered 429 instead. */
export const AUTH_FAILURE_LIMIT = { requests: 30, windowSeconds: 60 };

/**
 * Requests per API key per window. On PostgreSQL the counters live in the
 * database, so every server process shares them; the embedded database has a
 * single process by construction, so memory is exact there.
 */
export function createRateLimiter(options: RateLimitOptions, pool: pg.Pool | undefined, keyPrefix = "api-key"): RateLimiter {
  if (options.requests === 0) return { consume: () => Promise.resolve({ allowed: true }), reset: () => Promise.resolve() };
  const limits = { points: options.requests, duration: options.windowSeconds, keyPrefix };
  const limiter: RateLimiterAbstract = pool
    ? new RateLimiterPostgres({ ...limits, storeClient: pool, storeType: "pool", tableName: "rate_limits", tableCreated: true })
    : new RateLimiterMemory(limits);
  return {
    limits: options,
    async consume(key, points = 1) {
      const stateOf = (res: RateLimiterRes): RateLimitState => ({
        limit: options.requests,
        remaining: Math.max(0, res.remainingPoints),
        resetSeconds: Math.max(0, Math.ceil(res.msBeforeNext / 1000)),
      });
      try {
        return { allowed: true, state: stateOf(await limiter.consume(key, points)) };
      } catch (rejection) {
        // The library rejects with a RateLimiterRes when the budget is spent, with an Error when the store fails.
        if (rejection instanceof RateLimiterRes) {
          return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(rejection.msBeforeNext / 1000)), state: stateOf(rejection) };
        }
        throw rejection;
      }
    },
    async reset(key) {
      await limiter.delete(key);
    },
  };
}

/** A key's points in one process: those leased and not yet spent, what the shared counter had left at the last lease, and when its window ends. */
type LocalPoints = { available: number; sharedRemaining: number; resetsAt: number };

/** The most points a process leases at once; a lease is a hundredth of the limit below that. */
const MAX_LEASE = 50;

/**
 * The API keys' limiter for many processes without a database write per
 * request: each process leases points from the shared counter in chunks (a
 * hundredth of the limit, at most 50) and spends them locally. The shared
 * counter never passes the limit. The cost is on the other side: points a
 * process leased but did not spend by the window's end, and a last lease that
 * no longer fit, are lost for that window, so a key can be refused up to twice
 * the lease per process before the limit is reached (20 of 1,000 with the
 * defaults), never after it. A limit of up to 199 per window leases one point
 * at a time: exact.
 *
 * One lease per key is under way at a time in a process: requests that find
 * the key's points spent while it is leased wait for that lease and spend
 * from it, instead of each leasing a chunk of their own (a write each, on one
 * row, queued behind one another when the database is slow, and chunks the
 * window may then lose).
 */
export function createLeasedRateLimiter(shared: RateLimiter): RateLimiter {
  const limits = shared.limits;
  if (!limits) return shared;
  const lease = Math.min(MAX_LEASE, Math.max(1, Math.floor(limits.requests / 100)));
  if (lease === 1) return shared;
  const local = new Map<string, LocalPoints>();
  /** The lease under way for a key, if any. */
  const leasing = new Map<string, Promise<RateLimitDecision>>();
  const stateOf = (entry: LocalPoints): RateLimitState => ({
    limit: limits.requests,
    remaining: entry.sharedRemaining + entry.available,
    resetSeconds: Math.max(0, Math.ceil((entry.resetsAt - Date.now()) / 1000)),
  });
  return {
    limits,
    async consume(key, points = 1) {
      let entry: LocalPoints | undefined;
      for (;;) {
        entry = local.get(key);
        if (entry && entry.resetsAt <= Date.now()) {
          local.delete(key);
          entry = undefined;
        }
        if (entry && entry.available >= points) {
          entry.available -= points;
          return { allowed: true, state: stateOf(entry) };
        }
        const underWay = leasing.get(key);
        if (!underWay) break;
        await underWay;
      }
      const spent = entry;
      // Lease a chunk (or what this request needs, when it is more); when the chunk no longer fits, just what is needed.
      // What it leased beyond this request's points is in `local` before anyone waiting for it goes on.
      const leasingNow = (async (): Promise<RateLimitDecision> => {
        let leased = Math.max(points, lease);
        let decision = await shared.consume(key, leased);
        if (!decision.allowed && leased > points) {
          decision = await shared.consume(key, points);
          leased = points;
        }
        if (!decision.allowed || !decision.state) return spent ? { ...decision, state: { ...stateOf(spent), remaining: spent.available } } : decision;
        const current = local.get(key) ?? { available: 0, sharedRemaining: 0, resetsAt: 0 };
        current.available += leased - points;
        current.sharedRemaining = decision.state.remaining;
        current.resetsAt = Date.now() + decision.state.resetSeconds * 1000;
        local.set(key, current);
        // Keys that went quiet do not stay in memory.
        if (local.size > 10_000) for (const [name, stale] of local) if (stale.resetsAt <= Date.now()) local.delete(name);
        return { allowed: true, state: stateOf(current) };
      })();
      leasing.set(key, leasingNow);
      try {
        return await leasingNow;
      } finally {
        leasing.delete(key);
      }
    },
    async reset(key) {
      local.delete(key);
      await shared.reset(key);
    },
  };
}
