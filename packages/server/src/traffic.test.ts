import { describe, expect, it } from "vitest";
import { LiveTraffic } from "./traffic.js";

describe("LiveTraffic", () => {
  it("is busy while a call is in flight, and after the last one only within the quiet time", () => {
    const live = new LiveTraffic();
    expect(live.busy(0)).toBe(false);
    live.begin();
    live.begin();
    live.end();
    expect(live.busy(0)).toBe(true);
    live.end();
    expect(live.busy(0)).toBe(false);
    expect(live.busy(60_000)).toBe(true);
  });

  it("never counts below zero when a call ends twice", () => {
    const live = new LiveTraffic();
    live.begin();
    live.end();
    live.end();
    live.begin();
    expect(live.busy(0)).toBe(true);
  });
});
