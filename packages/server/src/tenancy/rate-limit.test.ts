import { describe, expect, it } from "vitest";
import { createLeasedRateLimiter, createRateLimiter, type RateLimiter } from "./access.js";

/** A real (in-memory) shared counter, and how many times it was written. */
function sharedCounter(requests: number) {
  const real = createRateLimiter({ requests, windowSeconds: 60 }, undefined);
  const counted = { writes: 0 };
  const limiter: RateLimiter = {
    limits: real.limits,
    consume: (key, points) => {
      counted.writes++;
      return real.consume(key, points);
    },
    reset: (key) => real.reset(key),
  };
  return { limiter, counted };
}

async function admitted(limiter: RateLimiter, attempts: number): Promise<number> {
  let allowed = 0;
  for (let i = 0; i < attempts; i++) if ((await limiter.consume("key")).allowed) allowed++;
  return allowed;
}

describe("the leased rate limiter", () => {
  it("writes the shared counter once per lease, not per request", async () => {
    const shared = sharedCounter(1000);
    const leased = createLeasedRateLimiter(shared.limiter);
    expect(await admitted(leased, 500)).toBe(500);
    expect(shared.counted.writes).toBe(50);
    const decision = await leased.consume("key");
    expect(decision.state).toMatchObject({ limit: 1000, remaining: 499 });
  });

  it("never admits more than the limit across processes, and refuses at most twice the lease per process early", async () => {
    const shared = sharedCounter(1000);
    const [a, b] = [createLeasedRateLimiter(shared.limiter), createLeasedRateLimiter(shared.limiter)];
    let total = 0;
    for (let round = 0; round < 700; round++) total += (await admitted(a, 1)) + (await admitted(b, 1));
    expect(total).toBeLessThanOrEqual(1000);
    expect(total).toBeGreaterThanOrEqual(1000 - 2 * 2 * 10);
    const refused = await a.consume("key");
    expect(refused).toMatchObject({ allowed: false });
  });

  it("leases once for requests that arrive together, and they spend from that lease", async () => {
    const shared = sharedCounter(1000);
    const leased = createLeasedRateLimiter(shared.limiter);
    const decisions = await Promise.all(Array.from({ length: 200 }, () => leased.consume("key")));
    expect(decisions.every((decision) => decision.allowed)).toBe(true);
    // 200 requests, 10 points a lease: 20 leases, one after another.
    expect(shared.counted.writes).toBe(20);
    expect(await leased.consume("key")).toMatchObject({ allowed: true, state: { limit: 1000, remaining: 799 } });
  });

  it("shares a failed lease's error with the requests waiting for it, and leases again afterwards", async () => {
    const shared = sharedCounter(1000);
    let failing = true;
    const flaky: RateLimiter = { ...shared.limiter, consume: (key, points) => (failing ? Promise.reject(new Error("database unavailable")) : shared.limiter.consume(key, points)) };
    const leased = createLeasedRateLimiter(flaky);
    const outcomes = await Promise.allSettled(Array.from({ length: 5 }, () => leased.consume("key")));
    expect(outcomes.map((outcome) => outcome.status)).toEqual(Array(5).fill("rejected"));
    failing = false;
    expect(await leased.consume("key")).toMatchObject({ allowed: true, state: { remaining: 999 } });
  });

  it("is exact for small limits", async () => {
    const shared = sharedCounter(5);
    const leased = createLeasedRateLimiter(shared.limiter);
    expect(await admitted(leased, 8)).toBe(5);
    expect(shared.counted.writes).toBe(8);
  });
});
