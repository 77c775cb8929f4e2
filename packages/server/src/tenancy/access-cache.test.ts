import { describe, expect, it } from "vitest";
import { AccessCache, type KeyAccess } from "./access.js";

/** A key of team 1 granted store `storeId`, as the database answers it. */
const granted = (storeId: number): NonNullable<KeyAccess> => ({
  key_id: 1,
  key_team_id: 1,
  key_store_id: null,
  store_id: storeId,
  store_team_id: 1,
  store_paused: false,
  store_country: "US",
  store_recovery_delay_seconds: 3600,
  store_log_bodies: false,
  key_expires_at: null,
});

/** A cache in front of a lookup that counts its reads (the database's part): what the cache answers, and how often it had to read. */
function cached(cache: AccessCache, answer: (storeId: number) => KeyAccess = granted) {
  const reads: number[] = [];
  const lookup = (storeId: number) =>
    cache.get(`hash-${storeId}`, storeId, () => {
      reads.push(storeId);
      return Promise.resolve(answer(storeId));
    });
  return { lookup, reads };
}

describe("the key cache", () => {
  it("reads a granted access once, then answers it from memory", async () => {
    const cache = new AccessCache();
    cache.setLive(true);
    const { lookup, reads } = cached(cache);
    expect(await lookup(7)).toEqual(granted(7));
    expect(await lookup(7)).toEqual(granted(7));
    expect(reads).toEqual([7]);
    expect({ hits: cache.hits, misses: cache.misses }).toEqual({ hits: 1, misses: 1 });
  });

  it("forgets the least recently used access first when full", async () => {
    const cache = new AccessCache(30_000, 3);
    cache.setLive(true);
    const { lookup, reads } = cached(cache);
    for (const store of [1, 2, 3]) await lookup(store);
    await lookup(1); // 1 is now the most recently used; 2 the least
    await lookup(4); // full: 2 goes
    reads.length = 0;
    for (const store of [1, 3, 4]) await lookup(store);
    expect(reads).toEqual([]);
    await lookup(2);
    expect(reads).toEqual([2]);
  });

  it("stays bounded and right past many more accesses than it holds", async () => {
    const cache = new AccessCache(30_000, 100);
    cache.setLive(true);
    const { lookup, reads } = cached(cache);
    for (let store = 1; store <= 5_000; store++) expect(await lookup(store)).toEqual(granted(store));
    reads.length = 0;
    for (let store = 4_901; store <= 5_000; store++) await lookup(store);
    expect(reads).toEqual([]);
    await lookup(1);
    expect(reads).toEqual([1]);
  });

  it("never remembers a refusal, nor anything while the change notifications are down", async () => {
    const cache = new AccessCache();
    cache.setLive(true);
    const refusing = cached(cache, () => undefined);
    await refusing.lookup(1);
    await refusing.lookup(1);
    expect(refusing.reads).toEqual([1, 1]);
    cache.setLive(false);
    const { lookup, reads } = cached(cache);
    await lookup(2);
    await lookup(2);
    expect(reads).toEqual([2, 2]);
  });

  it("drops a lookup that was in flight when a change arrived", async () => {
    const cache = new AccessCache();
    cache.setLive(true);
    let reads = 0;
    const lookup = () =>
      cache.get("hash", 9, () => {
        reads++;
        if (reads === 1) cache.notified();
        return Promise.resolve(granted(9));
      });
    await lookup();
    await lookup();
    expect(reads).toBe(2);
    await lookup();
    expect(reads).toBe(2);
  });
});
