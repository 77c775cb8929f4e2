import { describe, expect, it } from "vitest";
import { LiveTraffic } from "./traffic.js";

describe("LiveTraffic", () => {
  it("is busy while a call is in flight, and after the last one only within the quiet time", () => {
    const live = new LiveTraffic();
    expect(live.busy(0)).toBe(false);
    live.inFlight = 2;
    live.lastSeen = performance.now();
    expect(live.busy(0)).toBe(true);
    live.inFlight = 0;
    expect(live.busy(0)).toBe(false);
    expect(live.busy(60_000)).toBe(true);
  });
});
