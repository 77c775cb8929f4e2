/**
 * The live API calls this process serves, as the import runner sees them: while
 * a call is in flight, or one ended a moment ago, imports pace themselves by
 * how those calls are answered (see `imports/pace.ts`), so a backfill never
 * takes a shop's pushes' place.
 */
export class LiveTraffic {
  /** Live calls being answered now: the app counts each in when it arrives and out when its connection is done with it. */
  inFlight = 0;
  /** When a live call last arrived or ended (`performance.now()`). */
  lastSeen = Number.NEGATIVE_INFINITY;
  /** Live calls answered so far, and the sum of their latencies (ms): a reader takes what changed between two looks. */
  answered = 0;
  latencyMsTotal = 0;

  /** A call in flight, or one seen within `quietMs`. */
  busy(quietMs = LIVE_QUIET_MS): boolean {
    return this.inFlight > 0 || performance.now() - this.lastSeen < quietMs;
  }

  /** A live call answered in `latencyMs`. */
  answer(latencyMs: number): void {
    this.answered++;
    this.latencyMsTotal += latencyMs;
  }
}

/** How long after the last live call imports keep yielding: pushes come in bursts a few hundred ms apart. */
export const LIVE_QUIET_MS = 1_000;
