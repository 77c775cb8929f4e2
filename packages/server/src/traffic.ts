/**
 * The live API calls this process serves, as the import runner sees them: while
 * a call is in flight, or one ended a moment ago, imports take only their share
 * of the process and of the database, so a backfill never takes a shop's
 * pushes' place.
 */
export class LiveTraffic {
  private inFlight = 0;
  private lastSeen = Number.NEGATIVE_INFINITY;

  begin(): void {
    this.inFlight++;
    this.lastSeen = performance.now();
  }

  end(): void {
    this.inFlight = Math.max(0, this.inFlight - 1);
    this.lastSeen = performance.now();
  }

  /** A call in flight, or one seen within `quietMs`. */
  busy(quietMs = LIVE_QUIET_MS): boolean {
    return this.inFlight > 0 || performance.now() - this.lastSeen < quietMs;
  }
}

/** How long after the last live call imports keep yielding: pushes come in bursts a few hundred ms apart. */
export const LIVE_QUIET_MS = 1_000;
