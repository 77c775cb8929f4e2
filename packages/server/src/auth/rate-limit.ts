import type pg from "pg";
import { RateLimiterMemory, RateLimiterPostgres, RateLimiterRes, type RateLimiterAbstract } from "rate-limiter-flexible";

/** What the caller may still do: the window's limit, what is left of it, and when it resets (absent when there is no limit). */
export type RateLimitState = { limit: number; remaining: number; resetSeconds: number };

export type RateLimitDecision = ({ allowed: true } | { allowed: false; retryAfterSeconds: number }) & { state?: RateLimitState };

export interface RateLimiter {
  consume(key: string): Promise<RateLimitDecision>;
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
    async consume(key) {
      const stateOf = (res: RateLimiterRes): RateLimitState => ({
        limit: options.requests,
        remaining: Math.max(0, res.remainingPoints),
        resetSeconds: Math.max(0, Math.ceil(res.msBeforeNext / 1000)),
      });
      try {
        return { allowed: true, state: stateOf(await limiter.consume(key)) };
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
