/**
 * The live API calls this process serves, as the import runner sees them: while
 * a call is in flight, or one ended a moment ago, imports take only their share
 * of the process and of the database, so a backfill never takes a shop's
 * pushes' place.
 */
export class LiveTraffic {
  /** Live calls being answered now: the app counts each in when it arrives and out when its connection is done with it. */
  inFlight = 0;
  /** When a live call last arrived or ended (`performance.now()`). */
  lastSeen = Number.NEGATIVE_INFINITY;

  /** A call in flight, or one seen within `quietMs`. */
  busy(quietMs = LIVE_QUIET_MS): boolean {
    return this.inFlight > 0 || performance.now() - this.lastSeen < quietMs;
  }
}

/** How long after the last live call imports keep yielding: pushes come in bursts a few hundred ms apart. */
export const LIVE_QUIET_MS = 1_000;
