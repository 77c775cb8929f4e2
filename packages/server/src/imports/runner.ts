import { hostname } from "node:os";
import { inflateRawSync } from "node:zlib";
import type { StoreContext } from "../tenancy/access.js";
import { isDatabaseUnavailable } from "../db/index.js";
import { inTransaction } from "../db/sql.js";
import type { Db, Executor } from "../db/types.js";
import { errorForLog, type Logger } from "../logger.js";
import { writeItems, type ItemResult, type ServiceCall } from "../records/write-path.js";
import { afterMergeOf, chunkFailed, chunkMerged, claimChunk, holdMerge, failAbandonedUploads, failImport, lockImport, releaseChunk, startQueued, type ClaimedChunk, type LineRefusal } from "./import.repository.js";
import { IMPORT_WRITES } from "./kinds.js";
import { checkChunk, roundsOf, type CheckedLine } from "./lines.js";
import { LIVE_QUIET_MS, type LiveTraffic } from "../traffic.js";

export type ImportRunnerOptions = {
  /** Chunks this process reads and merges at once (0: this process runs no import). */
  concurrency: number;
  /** How long a claimed chunk stays this process's: past it, a process that died mid-chunk loses it to another. */
  leaseSeconds: number;
  /** Imports one team runs at once; the others queue. */
  perTeam: number;
  pollIntervalMs: number;
  /** A receiving upload whose heartbeat stopped this long ago (its server died mid-way, no 202 was sent) fails as interrupted. */
  abandonedAfterSeconds?: number;
  /** While live calls are served, the share of the time imports take (see `LiveTraffic`); 1 or unset: they never yield. */
  liveShare?: number;
};

export type ImportRunner = { nudge(): void; stop(): Promise<void> };

/** Chunks of one import read ahead of its next merge. */
const READ_AHEAD = 2;
/**
 * An upload's server touches it every 10 s while it arrives; one untouched
 * for this long lost its server. Runners look for such uploads every third of
 * it, so one shows `failed` within four thirds of it (a minute) of its
 * server's death.
 */
const STALE_UPLOAD_SECONDS = 45;
/** Failures of the service's own (not the database's) before an import is failed. */
const MOST_FAILURES = 5;
/** The longest pause after a chunk while live calls are served: an import under steady traffic still advances. */
const LONGEST_YIELD_MS = 2_000;
/** Lines checked between two looks at the event loop while live calls are served (a few hundred microseconds). */
const LINES_PER_SLICE = 128;

type Outcome = "merged" | "wait" | "gone";

/** A merge this process runs: the rows its chunk may touch, and the merge before it that it began beside. */
type Merging = { seq: number; touches: ReadonlySet<string>; before: Merging | undefined; done: Promise<unknown>; finished: boolean };

/** Thrown inside a merge begun before its turn, when the turn did not come: what it wrote is undone. */
class NotItsTurn extends Error {
  constructor(readonly outcome: "wait" | "gone") {
    super(`not the chunk's turn: ${outcome}`);
  }
}

/** Every row the valid lines of a chunk may touch (see `UpsertSpec.touches`). */
function touchesOf(spec: (typeof IMPORT_WRITES)[keyof typeof IMPORT_WRITES], lines: readonly CheckedLine[]): Set<string> {
  const touched = new Set<string>();
  for (const { item } of lines) if (!item.refused) for (const name of spec.touches(item.value)) touched.add(name);
  return touched;
}

/** Whether `touches` meets the rows of `merging`, or of any merge it began beside that is still running. */
function meets(touches: ReadonlySet<string>, merging: Merging): boolean {
  for (let at: Merging | undefined = merging; at && !at.finished; at = at.before) {
    for (const name of touches) if (at.touches.has(name)) return true;
  }
  return false;
}

/**
 * Runs imports: claims their chunks (any process may take any chunk not held),
 * checks every line as a push would, and merges each chunk in one transaction
 * through the batch's own write (`writeItems`, set-based), counted, its refused
 * lines kept, in file order. A chunk is merged exactly once: its merge, its
 * counts and its removal commit together, and a chunk whose process died is
 * taken again once its lease passes. On PostgreSQL a chunk whose rows cannot
 * meet those of the merge before it writes beside it, and commits after it.
 */
export function startImportRunner(
  deps: {
    db: Db;
    logger: Logger;
    live?: LiveTraffic;
    /** Whether a chunk's merge may run beside the one before (see `merge`): PostgreSQL, whose connections work at once; not the embedded database, which has one. */
    sideBySide?: boolean;
  },
  options: ImportRunnerOptions,
): ImportRunner {
  const holder = `${hostname()}:${process.pid}:${crypto.randomUUID().slice(0, 8)}`;
  const log = deps.logger.child({ component: "imports" });
  let stopped = false;
  const sleeping = new Set<() => void>();
  /** Chunks read but not merged yet (their turn had not come): kept so the next try need not read them again. */
  const read = new Map<string, CheckedLine[]>();
  /**
   * The merge this process is running of each import: the next chunk, checked meanwhile, starts its own as soon
   * as it ends, instead of finding its turn not come and trying again later.
   */
  const merging = new Map<number, Merging>();

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        sleeping.delete(done);
        resolve();
      }
      sleeping.add(done);
    });

  /**
   * Merges a chunk in one transaction, in its turn. `early`: this process runs the merge of the chunk before it,
   * and none of that merge's rows (nor those of any merge still running that it began beside) meet the rows the
   * lines of this one touch: this one's writes go first, beside them (both cores work), and its turn is taken after
   * them, once the merge before has ended; a turn not come (that merge failed) undoes them, to be merged again.
   * Every wait is in the database (the merge before's advisory lock, then the import's row), never in this process
   * while holding rows, so that any cycle of waits is one PostgreSQL sees and breaks.
   */
  async function merge(chunk: ClaimedChunk, lines: readonly CheckedLine[], early: boolean): Promise<Outcome> {
    const spec = IMPORT_WRITES[chunk.kind];
    const store: StoreContext = { id: chunk.store_id, teamId: chunk.team_id, country: chunk.country, recoveryDelaySeconds: chunk.recovery_delay_seconds };
    const inTurn = async (trx: Executor) => {
      const state = await lockImport(trx, chunk.import_id);
      if (!state || state.status !== "running" || state.merged_chunks > chunk.seq) return "gone";
      if (state.merged_chunks < chunk.seq) return "wait";
      return undefined;
    };
    return inTransaction(deps.db, async (trx) => {
      if (deps.sideBySide) await holdMerge(trx, chunk.import_id, chunk.seq);
      if (!early) {
        const out = await inTurn(trx);
        if (out) return out;
      }
      // An import is history: stored as a push with `X-Backfill: true`, triggering nothing. Its counts and refusals
      // are all it keeps of each line's answer: the statements answer no record.
      const call: ServiceCall = { db: trx, store, options: { backfill: true, statusesOnly: true } };
      const results = new Map<number, ItemResult>();
      for (const round of roundsOf(spec, lines)) {
        const written = await writeItems(call, spec, round.map((line) => line.item), { logger: log, requestId: `import-${chunk.import_id}` });
        round.forEach((line, i) => results.set(line.line, written[i] as ItemResult));
      }
      const counts = { created: 0, updated: 0, failed: 0 };
      const refusals: LineRefusal[] = [];
      for (const [line, result] of results) {
        if (result.status === 201) counts.created++;
        else if (result.status === 200) counts.updated++;
        else {
          counts.failed++;
          refusals.push({ line, external_id: result.external_id, status: result.status, code: result.code ?? "internal_error", error: result.error ?? "", details: result.details });
        }
      }
      refusals.sort((a, b) => a.line - b.line);
      if (early) {
        await afterMergeOf(trx, chunk.import_id, chunk.seq - 1);
        const out = await inTurn(trx);
        if (out) throw new NotItsTurn(out);
      }
      await chunkMerged(trx, chunk.import_id, chunk.seq, counts, refusals);
      return "merged" as const;
    }).catch((error: unknown) => {
      if (error instanceof NotItsTurn) return error.outcome;
      throw error;
    });
  }

  const share = options.liveShare ?? 1;
  const live = share < 1 ? deps.live : undefined;
  /** Time given to live calls between slices of checks, which is not the import's own work. */
  let yieldedMs = 0;
  /** While live calls are served: let them run between slices of a chunk's check. */
  const slice = live
    ? () => {
        if (!live.busy()) return undefined;
        const from = performance.now();
        return new Promise<void>((resolve) =>
          setImmediate(() => {
            yieldedMs += performance.now() - from;
            resolve();
          }),
        );
      }
    : undefined;

  let lastSweep = 0;
  const staleSeconds = options.abandonedAfterSeconds ?? STALE_UPLOAD_SECONDS;

  async function once(index: number): Promise<boolean> {
    // Live calls first: while they are served, one chunk at a time.
    if (index > 0 && live?.busy()) {
      await sleep(LIVE_QUIET_MS);
      return true;
    }
    if (Date.now() - lastSweep >= (staleSeconds * 1000) / 3) {
      lastSweep = Date.now();
      await failAbandonedUploads(deps.db, staleSeconds);
    }
    const chunk = await claimChunk(deps.db, holder, options.leaseSeconds, READ_AHEAD);
    if (!chunk) return inTransaction(deps.db, (trx) => startQueued(trx, options.perTeam));
    const id = `${chunk.import_id}:${chunk.seq}`;
    try {
      const started = performance.now();
      yieldedMs = 0;
      const lines =
        read.get(id) ??
        (await checkChunk(IMPORT_WRITES[chunk.kind], { text: inflateRawSync(chunk.body), firstLine: chunk.first_line, gaps: chunk.gaps }, { country: chunk.country }, slice, LINES_PER_SLICE));
      const checked = performance.now();
      const ahead = merging.get(chunk.import_id);
      const touches = deps.sideBySide ? touchesOf(IMPORT_WRITES[chunk.kind], lines) : new Set<string>();
      // The merge of the chunk just before, still running: this one need not wait for it when their rows cannot meet,
      // nor those of any merge still running that it began beside.
      const early = deps.sideBySide === true && ahead !== undefined && !ahead.finished && ahead.seq === chunk.seq - 1 && !meets(touches, ahead);
      if (ahead && !early) await ahead.done;
      const merged = merge(chunk, lines, early);
      const mine: Merging = { seq: chunk.seq, touches, before: early ? ahead : undefined, done: merged.catch(() => undefined), finished: false };
      merging.set(chunk.import_id, mine);
      const outcome = await merged.finally(() => {
        mine.finished = true;
        mine.before = undefined;
        if (merging.get(chunk.import_id) === mine) merging.delete(chunk.import_id);
      });
      log.debug({ importId: chunk.import_id, chunk: chunk.seq, outcome, checkMs: Math.round(checked - started), mergeMs: Math.round(performance.now() - checked) }, "import chunk");
      if (outcome === "wait") {
        // The chunk before it is still being merged (or its process died): let go, and come back to it.
        if (read.size >= options.concurrency * READ_AHEAD) read.clear();
        read.set(id, lines);
        await releaseChunk(deps.db, chunk.import_id, chunk.seq, holder);
        await sleep(10);
      } else {
        read.delete(id);
        // Then, while live calls are served, a pause that leaves them the rest of the time.
        if (live?.busy()) await sleep(Math.min(LONGEST_YIELD_MS, (performance.now() - started - yieldedMs) * (1 / share - 1)));
      }
      return true;
    } catch (error) {
      read.delete(id);
      if (isDatabaseUnavailable(error)) throw error;
      const failures = await chunkFailed(deps.db, chunk.import_id, chunk.seq, 2 ** Math.min(chunk.attempts, 6));
      log.error({ err: errorForLog(error), importId: chunk.import_id, chunk: chunk.seq, failures }, "import chunk failed");
      if (failures >= MOST_FAILURES) await failImport(deps.db, chunk.import_id);
      return true;
    }
  }

  async function loop(index: number): Promise<void> {
    let backoffMs = 0;
    while (!stopped) {
      try {
        const worked = await once(index);
        backoffMs = 0;
        if (!worked) await sleep(options.pollIntervalMs);
        // Let the event loop take in what arrived meanwhile: the embedded database runs its statements on this
        // thread, and a loop that only ever awaited its queries would keep the requests waiting until the import ends.
        else await new Promise((resolve) => setImmediate(resolve));
      } catch (error) {
        // The database is away: try again, more slowly each time, without losing anything (nothing was committed).
        backoffMs = Math.min(5_000, backoffMs === 0 ? 100 : backoffMs * 2);
        log.warn({ err: errorForLog(error), retryInMs: backoffMs }, "imports paused");
        await sleep(backoffMs);
      }
    }
  }

  const loops = Array.from({ length: options.concurrency }, (_, index) => loop(index));
  return {
    nudge() {
      for (const done of [...sleeping]) done();
    },
    async stop() {
      stopped = true;
      for (const done of [...sleeping]) done();
      await Promise.all(loops);
    },
  };
}
