import type { LiveTraffic } from "../traffic.js";

/** The share of the time an import works beside live calls before their answers have said anything. */
export const FIRST_SHARE = 0.15;
/** The most it works while live calls are served, however little it costs them: it rests enough to keep learning what they take alone. */
export const MOST_SHARE = 0.9;
/** The least share it is given, whatever its work costs the calls (its rests are bounded too, by `LONGEST_REST_MS`). */
const LEAST_SHARE = 0.01;
/** The longest rest after a chunk: an import under steady traffic still advances, whatever its work costs the calls. */
export const LONGEST_REST_MS = 2_000;
/** How much each phase's calls weigh against those of the phases before (the older fade). */
const FADE = 0.8;
/** Calls a mean needs before it counts. */
const FEWEST_CALLS = 3;

/** A mean of latencies over phases, the older fading. */
class FadingMean {
  private sum = 0;
  private count = 0;

  add(sum: number, count: number): void {
    this.sum = this.sum * FADE + sum;
    this.count = this.count * FADE + count;
  }

  value(): number | undefined {
    return this.count >= FEWEST_CALLS ? this.sum / this.count : undefined;
  }
}

/**
 * How an import paces itself beside live calls, from their own answers: the
 * mean latency of the calls answered while it works (`W`) and while it rests
 * (`R`, theirs alone), each over the last phases, the older fading. Working a
 * share `s` of the time gives the calls a mean latency of `(1 − s)·R + s·W`,
 * which stays within `R / keep` when `s ≤ R·(1/keep − 1) / (W − R)`; at a
 * fixed number of calls at once, their throughput then keeps at least `keep`
 * of theirs alone. So an import takes what the calls leave, on any machine and
 * under any traffic: much beside a few calls it barely slows, little beside
 * many it would. Each process paces its own imports by its own calls.
 */
export class ImportPace {
  private readonly worked = new FadingMean();
  private readonly rested = new FadingMean();
  private answered: number;
  private latencyMsTotal: number;
  private working = false;

  constructor(
    private readonly live: LiveTraffic,
    /** What the calls keep of their speed alone, in (0, 1). */
    private readonly keep: number,
  ) {
    this.answered = live.answered;
    this.latencyMsTotal = live.latencyMsTotal;
  }

  /** The calls answered since the last look: their latencies' sum, and how many. */
  private since(): [number, number] {
    const taken: [number, number] = [this.live.latencyMsTotal - this.latencyMsTotal, this.live.answered - this.answered];
    this.answered = this.live.answered;
    this.latencyMsTotal = this.live.latencyMsTotal;
    return taken;
  }

  /** A chunk's work begins: the calls answered since the last rest began were answered while the import rested (or had nothing to do). */
  work(): void {
    if (this.working) return;
    this.working = true;
    this.rested.add(...this.since());
  }

  /** A chunk's work, of `workMs`, has ended: how long to rest before the next, in ms. */
  restAfter(workMs: number): number {
    this.working = false;
    this.worked.add(...this.since());
    return Math.min(LONGEST_REST_MS, workMs * (1 / this.share() - 1));
  }

  /** The share of the time the import may work, from what the calls said so far. */
  share(): number {
    const worked = this.worked.value();
    const rested = this.rested.value();
    if (worked === undefined || rested === undefined) return FIRST_SHARE;
    if (worked <= rested) return MOST_SHARE;
    return Math.max(LEAST_SHARE, Math.min(MOST_SHARE, (rested * (1 / this.keep - 1)) / (worked - rested)));
  }
}
