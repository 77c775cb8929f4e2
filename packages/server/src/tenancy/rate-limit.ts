import type pg from "pg";
import { RateLimiterMemory, RateLimiterPostgres, RateLimiterRes, type RateLimiterAbstract } from "rate-limiter-flexible";

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
