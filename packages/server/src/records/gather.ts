import { isDatabaseUnavailable } from "../db/index.js";
import { isRetryable } from "../db/transaction.js";
import type { Db } from "../db/types.js";
import { AppError } from "../errors.js";
import type { Logger } from "../logger.js";
import { errorForLog } from "../logger.js";
import type { ServiceCall, Upserted } from "./calls.js";

/** How many writes of one lane (one store, one kind of record, one trigger mode) are under way at once; pushes arriving beyond them wait and go together. */
export const WRITES_PER_LANE = 2;
/** The most pushes one shared write carries. */
export const MOST_PER_WRITE = 200;

import { gathered } from "./gathered.js";

export { gathered };

type Waiting<Body, Record> = { body: Body; key: string; resolve: (result: Upserted<Record>) => void; reject: (error: unknown) => void };
type Lane<Body, Record> = { call: ServiceCall; logger: Logger; writing: number; waiting: Array<Waiting<Body, Record>>; scheduled: boolean; keysWriting: Set<string> };

type Writes<Body, Record> = {
  upsert: (call: ServiceCall, body: Body) => Promise<Upserted<Record>>;
  upsertMany: (call: ServiceCall, bodies: Body[]) => Promise<Array<Upserted<Record> | AppError>>;
  keyOf: (body: Body) => string;
};

/** Two pushes may share a write only when everything but their bodies is the same: the store as authorized, and whether they are backfills. */
const laneOf = ({ store, options }: ServiceCall) => JSON.stringify([store.id, store.teamId, store.country, store.recoveryDelaySeconds, options.backfill]);

/**
 * Single pushes written together when they arrive together (group commit).
 *
 * A push waits only for the event loop to take in the requests that arrived
 * with it (one turn, no timer). Then, while fewer than `WRITES_PER_LANE` writes
 * of its lane are under way, the pushes waiting go: one alone by the single
 * push's own statement, several (up to `MOST_PER_WRITE`) by the batch's
 * set-based statements in one transaction. Pushes arriving while those writes
 * run wait for the first to end. So a quiet service writes each push at once,
 * and a busy one makes fewer, larger writes instead of queueing for
 * connections (on the embedded database, whose statements run on this
 * thread, the turn is what lets pushes meet at all); each push still answers
 * only once what it wrote is committed.
 *
 * Each push is stored, answered and triggers exactly as it would alone (the
 * batch's guarantee): its own status, record or refusal. Pushes of one key
 * never share a write nor run beside one another: each waits for the one
 * before it to end, so they apply in the order they arrived.
 * Should the shared write fail for a reason of one push's own, each push is
 * written again alone, so that the failure is only that push's; a failure of
 * the database is every waiting push's, as it would have been.
 */
export function gatherPushes<Body, Record extends object>(writes: Writes<Body, Record>): (call: ServiceCall, body: Body, logger: Logger) => Promise<Upserted<Record>> {
  const lanesOf = new WeakMap<Db, Map<string, Lane<Body, Record>>>();

  function drain(lanes: Map<string, Lane<Body, Record>>, id: string, lane: Lane<Body, Record>): void {
    while (lane.writing < WRITES_PER_LANE && lane.waiting.length > 0) {
      const group = take(lane);
      if (group.length === 0) return;
      lane.writing++;
      for (const push of group) lane.keysWriting.add(push.key);
      void write(lane, group).finally(() => {
        lane.writing--;
        for (const push of group) lane.keysWriting.delete(push.key);
        if (lane.writing === 0 && lane.waiting.length === 0) lanes.delete(id);
        else drain(lanes, id, lane);
      });
    }
  }

  /** The next write's pushes: the waiting ones in order, one per key and none of a key being written, up to the most a write carries. */
  function take(lane: Lane<Body, Record>): Array<Waiting<Body, Record>> {
    const keys = new Set<string>(lane.keysWriting);
    const group: Array<Waiting<Body, Record>> = [];
    const left: Array<Waiting<Body, Record>> = [];
    for (const push of lane.waiting) {
      if (group.length < MOST_PER_WRITE && !keys.has(push.key)) {
        keys.add(push.key);
        group.push(push);
      } else {
        left.push(push);
      }
    }
    lane.waiting = left;
    gathered.waiting -= group.length;
    return group;
  }

  const alone = (call: ServiceCall, push: Waiting<Body, Record>) => writes.upsert(call, push.body).then(push.resolve, push.reject);

  async function write(lane: Lane<Body, Record>, group: Array<Waiting<Body, Record>>): Promise<void> {
    gathered.writes++;
    gathered.pushes += group.length;
    const [only] = group;
    if (only && group.length === 1) {
      gathered.alone++;
      return alone(lane.call, only);
    }
    let results: Array<Upserted<Record> | AppError>;
    try {
      results = await writes.upsertMany(lane.call, group.map((push) => push.body));
    } catch (error) {
      if ((error instanceof AppError && error.status >= 500) || isDatabaseUnavailable(error) || isRetryable(error)) {
        for (const push of group) push.reject(error);
        return;
      }
      // Its transaction rolled back: nothing of it stays, and each push is written alone.
      lane.logger.warn({ err: errorForLog(error), pushes: group.length }, "pushes written one by one");
      await Promise.all(group.map((push) => alone(lane.call, push)));
      return;
    }
    group.forEach((push, i) => {
      const result = results[i];
      if (result === undefined) push.reject(new Error("a shared write answered fewer results than pushes"));
      else if (result instanceof AppError) push.reject(result);
      else push.resolve(result);
    });
  }

  return (call, body, logger) =>
    new Promise<Upserted<Record>>((resolve, reject) => {
      let lanes = lanesOf.get(call.db);
      if (!lanes) lanesOf.set(call.db, (lanes = new Map<string, Lane<Body, Record>>()));
      const id = laneOf(call);
      let lane = lanes.get(id);
      if (!lane) lanes.set(id, (lane = { call, logger, writing: 0, waiting: [], scheduled: false, keysWriting: new Set() }));
      lane.waiting.push({ body, key: writes.keyOf(body), resolve, reject });
      gathered.waiting++;
      if (lane.scheduled) return;
      // After the pushes that arrived in this turn of the event loop, not before.
      lane.scheduled = true;
      const scheduled = lane;
      setImmediate(() => {
        scheduled.scheduled = false;
        drain(lanes, id, scheduled);
      });
    });
}
