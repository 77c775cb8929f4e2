import { describe, expect, it } from "vitest";
import { LiveTraffic } from "../traffic.js";
import { FIRST_SHARE, ImportPace, LONGEST_REST_MS, MOST_SHARE } from "./pace.js";

/** Calls answered in `latencyMs` each. */
function answer(live: LiveTraffic, calls: number, latencyMs: number) {
  for (let i = 0; i < calls; i++) live.answer(latencyMs);
}

/** One chunk: calls answered while the import rested, then while it worked `workMs`; the rest it takes after. */
function chunk(pace: ImportPace, live: LiveTraffic, rested: [number, number], worked: [number, number], workMs = 100): number {
  answer(live, ...rested);
  pace.work();
  answer(live, ...worked);
  return pace.restAfter(workMs);
}

describe("ImportPace", () => {
  it("works its first share until the calls have said what its work costs them", () => {
    const live = new LiveTraffic();
    const pace = new ImportPace(live, 0.8);
    expect(pace.share()).toBe(FIRST_SHARE);
    // A chunk with no calls answered during its work says nothing yet.
    expect(chunk(pace, live, [50, 10], [0, 0], 100)).toBeCloseTo(100 * (1 / FIRST_SHARE - 1));
  });

  it("works the share that keeps the calls' mean latency within theirs alone over what they keep", () => {
    const live = new LiveTraffic();
    const pace = new ImportPace(live, 0.8);
    // Alone 10 ms, while it works 20 ms: (1 − s)·10 + s·20 ≤ 10 / 0.8 gives s = 0.25, so 100 ms of work rest 300 ms.
    expect(chunk(pace, live, [100, 10], [20, 20], 100)).toBeCloseTo(300);
    expect(pace.share()).toBeCloseTo(0.25);
    // Work that costs them twice as much (30 ms) halves the share.
    for (let i = 0; i < 30; i++) chunk(pace, live, [60, 10], [20, 30]);
    expect(pace.share()).toBeCloseTo(0.125, 2);
    // Asked to keep less of their speed, it takes more: half of it, beside the same 10 and 20 ms, all it may.
    const lenient = new ImportPace(live, 0.5);
    chunk(lenient, live, [100, 10], [20, 20]);
    expect(lenient.share()).toBe(MOST_SHARE);
  });

  it("works most of the time beside calls its work does not slow, and rests a little to keep measuring them", () => {
    const live = new LiveTraffic();
    const pace = new ImportPace(live, 0.8);
    expect(chunk(pace, live, [40, 10], [40, 9.5], 900)).toBeCloseTo(100);
    expect(pace.share()).toBe(MOST_SHARE);
  });

  it("never rests longer than its bound, so an import under any traffic still advances", () => {
    const live = new LiveTraffic();
    const pace = new ImportPace(live, 0.8);
    expect(chunk(pace, live, [100, 5], [20, 500], 400)).toBe(LONGEST_REST_MS);
  });

  it("takes the calls answered while it retried a chunk as answered while it worked", () => {
    const live = new LiveTraffic();
    const pace = new ImportPace(live, 0.8);
    answer(live, 100, 10);
    pace.work();
    answer(live, 10, 20);
    // The chunk's turn had not come: it works again before resting.
    pace.work();
    answer(live, 10, 20);
    expect(pace.restAfter(100)).toBeCloseTo(300);
  });
});
