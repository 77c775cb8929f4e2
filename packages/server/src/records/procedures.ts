import { errorBodySchema, errorDetailSchema, LIMITS, listQuerySchema, type ErrorCode, type Page } from "@commerce-ingest/shared";
import { z } from "zod";
import { authorize, refuseBodyProblem, type StoreContext } from "../tenancy/access.js";
import { baseProcedure, rest } from "../trpc.js";
import type { Context, IdempotencyRequest } from "../context.js";
import { inTransaction, isRetryable } from "../db/sql.js";
import { AppError, batchTooLarge } from "../errors.js";
import { parseBody, type PhonePath, parseItem, writeItems, type Resource, type UpsertSpec } from "./write-path.js";
import { recordOf, type ServiceCall, type Upserted } from "./calls.js";
import type { ReadBack } from "./read-back.js";
import { isDatabaseUnavailable } from "../db/index.js";
import type { Db } from "../db/types.js";
import { type Logger, errorForLog } from "../logger.js";
import { gathered } from "./gathered.js";
import { createHash } from "node:crypto";
import { toErrorResponse } from "../error-response.js";
import * as repo from "../requests/idempotency.repository.js";

/** What the document says of a resource's upsert (its batch's summary is made from it). */
type UpsertDocs = { summary: string; description: string };

/**
 * Store-scoped procedures: authorization (the key, the rate limit, the
 * store), then `Idempotency-Key` for their mutations (see `runOnce`), then,
 * for those that read a body, the problems the adapter found in it: the
 * contract's order. One step of tRPC's chain rather than one per check, as
 * each step copies the request's options.
 */
const storeGate = (readsBody: boolean) =>
  baseProcedure.use(async ({ ctx, getRawInput, meta, type, next }) => {
    const authorized = await authorize(ctx, await getRawInput(), meta?.contract?.batch);
    return runOnce(ctx, type, async () => {
      if (readsBody) refuseBodyProblem(ctx);
      return next({ ctx: authorized });
    });
  });

export const storeProcedure = storeGate(false);

export const storeBodyProcedure = storeGate(true);

/** What every store-scoped procedure can answer, before its own rules: the key, the rate limit, the store, the service. */
export const STORE_ERRORS = [
  "API_KEY_MISSING",
  "API_KEY_INVALID",
  "STORE_FORBIDDEN",
  "STORE_NOT_FOUND",
  "RATE_LIMITED",
  "INTERNAL",
  "SERVICE_UNAVAILABLE",
] as const satisfies readonly ErrorCode[];

/** What a procedure that reads a JSON body can answer besides. */
export const BODY_ERRORS = ["MALFORMED_JSON", "BODY_TOO_LARGE", "UNSUPPORTED_MEDIA_TYPE", "VALIDATION_FAILED"] as const satisfies readonly ErrorCode[];

/**
 * The path parameters. `store_id` is read (and refused with 404 when it is not a
 * positive integer) by authorization, before anything else; it is declared here
 * for the document.
 */
export const storeParams = z.object({ store_id: z.coerce.number().int().positive().meta({ description: "The store's numeric id" }) });
export const recordParams = storeParams.extend({
  external_id: z.string().meta({ description: "The record's external_id, percent-encoded (any character is allowed)" }),
});

/** The request's body, parsed once; the fields it ignored are named in `X-Ignored-Fields`. */
function parsedBody<S extends z.ZodType>(ctx: Context & { store: StoreContext }, schema: S, phonePaths: readonly PhonePath[]): z.output<S> {
  const { value, ignored } = parseBody(schema, phonePaths, ctx.rawBody ?? {}, ctx.store.country, { strict: ctx.strict });
  if (ignored.length > 0) ctx.response.headers = { ...ctx.response.headers, "X-Ignored-Fields": ignored.join(", ") };
  return value;
}

// `.output<z.ZodType<object, object>>`: tRPC cannot resolve a generic output type, and
// nothing calls these procedures through tRPC's client; the record types callers
// see are the shared schemas', which `spec.output` checks every response against.

/**
 * A store-scoped upsert on `POST /api/v1/stores/{store_id}/<resource>`: the
 * contract's check order (key, rate limit, store, body, rules), the body parsed
 * once, and 201 when the record was created, 200 when it was updated.
 */
function upsertProcedure<Body extends z.ZodType, Record extends object>(spec: UpsertSpec<Body, Record>, docs: UpsertDocs) {
  // Pushes arriving together are written together (see `gatherPushes`).
  const push = gatherPushes({ upsert: spec.upsert, upsertMany: spec.upsertMany, keyOf: spec.keyOf ?? ((body) => (body as { external_id: string }).external_id) });
  return storeBodyProcedure
    .meta(rest({ method: "POST", path: `/api/v1/stores/{store_id}/${spec.resource}`, tags: [spec.resource], summary: docs.summary, description: docs.description, protect: true }, {
        success: { 201: "Created: the key was new (or the customer had been erased)", 200: "Updated: a record with this key existed" },
        errors: [...STORE_ERRORS, ...BODY_ERRORS, ...(spec.errors ?? [])],
        body: spec.body,
        example: spec.example as object,
      }))
    .input(storeParams)
    .output<z.ZodType<object, object>>(spec.output)
    .mutation(async ({ ctx }) => {
      // Parsed here rather than in a middleware of its own: each step of tRPC's chain copies the context.
      const body = parsedBody(ctx, spec.body, spec.phonePaths);
      const upserted = await push({ db: ctx.db, store: ctx.store, options: { backfill: ctx.backfill } }, body, ctx.logger);
      ctx.response.status = upserted.created ? 201 : 200;
      // Its own external_id only: a customer keyed by its phone is not named, as the request log keeps no phone.
      const externalId = (body as { external_id?: unknown }).external_id;
      if (typeof externalId === "string") ctx.response.record = { kind: spec.resource, externalId };
      if (upserted.stale) ctx.response.headers = { ...ctx.response.headers, "X-Stale-Write": "ignored" };
      return recordOf(upserted);
    });
}

type PatchSpec<Body extends z.ZodType, Record extends object> = {
  resource: "orders" | "checkouts";
  summary: string;
  description: string;
  body: Body;
  /** A realistic change to the upsert's example record (a test sends it). */
  example: z.input<Body>;
  output: z.ZodType<Record, Record>;
  /** What an unknown external_id answers. */
  notFound: ErrorCode;
  update(call: ServiceCall, externalId: string, patch: z.output<Body>): Promise<{ record: Record; stale: boolean }>;
};

/** `PATCH /api/v1/stores/{store_id}/<resource>/{external_id}`: only the fields sent change; 404 for an unknown record. */
export function patchProcedure<Body extends z.ZodType, Record extends object>(spec: PatchSpec<Body, Record>) {
  return storeBodyProcedure
    .meta(rest({ method: "PATCH", path: `/api/v1/stores/{store_id}/${spec.resource}/{external_id}`, tags: [spec.resource], summary: spec.summary, description: spec.description, protect: true }, {
        success: { 200: "Updated (an empty body changes nothing and returns the record)" },
        errors: [...STORE_ERRORS, ...BODY_ERRORS, spec.notFound],
        body: spec.body,
        example: spec.example as object,
      }))
    .input(recordParams)
    .output<z.ZodType<object, object>>(spec.output)
    .mutation(async ({ ctx, input }) => {
      const body = parsedBody(ctx, spec.body, []);
      const { record, stale } = await spec.update({ db: ctx.db, store: ctx.store, options: { backfill: ctx.backfill } }, input.external_id, body);
      ctx.response.record = { kind: spec.resource, externalId: input.external_id };
      if (stale) ctx.response.headers = { ...ctx.response.headers, "X-Stale-Write": "ignored" };
      return record;
    });
}

/** A resource's two read-back operations: their summaries, the record's and the page's schemas, and how they read (see `readBack`). */
type ReadSpec<Record extends object, Item extends object> = {
  resource: Resource;
  summaries: { list: string; retrieve: string };
  record: z.ZodType<Record, Record>;
  page: z.ZodType<Page<Item>, Page<Item>>;
  read: ReadBack<Record, Item>;
};

/** A resource's two write operations, the single push and the batch, from one declaration (see `upsertProcedure`, `batchProcedure`). */
export function writeProcedures<Body extends z.ZodType, Record extends object>(spec: UpsertSpec<Body, Record>, docs: UpsertDocs) {
  return { upsert: upsertProcedure(spec, docs), batch: batchProcedure(spec, docs) };
}

/** A resource's list and retrieve operations (see `listProcedure`, `getProcedure`). */
export function readProcedures<Record extends object, Item extends object>(spec: ReadSpec<Record, Item>) {
  return { list: listProcedure(spec), retrieve: getProcedure(spec) };
}

/** `GET /api/v1/stores/{store_id}/<resource>/{external_id}`: the stored record, read back, with the same checks as the writes. */
function getProcedure<Record extends object, Item extends object>(spec: ReadSpec<Record, Item>) {
  return storeProcedure
    .meta(rest({
        method: "GET",
        path: `/api/v1/stores/{store_id}/${spec.resource}/{external_id}`,
        tags: [spec.resource],
        summary: spec.summaries.retrieve,
        description: "The full stored record: the published response fields and the fields the shop sent. The same keys, statuses and check order as the writes.",
        protect: true,
      }, { success: { 200: "The stored record" }, errors: [...STORE_ERRORS, spec.read.notFound] }))
    .input(recordParams)
    .output<z.ZodType<object, object>>(spec.record)
    .query(({ ctx, input }) => spec.read.get(ctx.db, ctx.store, input.external_id));
}

/**
 * `GET /api/v1/stores/{store_id}/<resource>`: the store's records a page at a
 * time, in the order they last changed (then their id), from `updated_after`,
 * with the same checks as the reads. A caller pages with `next_cursor` until
 * it is `null`; a record changed meanwhile comes again, in its newest form.
 */
function listProcedure<Record extends object, Item extends object>(spec: ReadSpec<Record, Item>) {
  return storeProcedure
    .meta(rest({
        method: "GET",
        path: `/api/v1/stores/{store_id}/${spec.resource}`,
        tags: [spec.resource],
        summary: spec.summaries.list,
        description:
          "The store's records as read back one by one, a page at a time (`limit`, default 100, at most 1,000), in the order they last changed, then their id. " +
          "Send the page's `next_cursor` as `cursor` for the next one, until it is `null`. Paging while writes go on returns every record that did not change exactly once, " +
          "and every record that changed meanwhile at least once, in its newest form: a change moves a record to the end. `updated_after` starts from a time instead of the beginning.",
        protect: true,
      }, { success: { 200: "A page of records" }, errors: [...STORE_ERRORS, "VALIDATION_FAILED"] }))
    .input(storeParams.extend(listQuerySchema.shape))
    .output<z.ZodType<object, object>>(spec.page)
    .query(({ ctx, input }) => spec.read.list(ctx.db, ctx.store, input));
}

/** The most records one batch may carry. */
export const BATCH_LIMIT = LIMITS.batchItems;

/** The batch's own shape, checked before any item: an object whose `items` holds 1 to 1,000 records. */
function batchItems(raw: Record<string, unknown> | undefined): unknown[] {
  const items = raw?.items;
  if (!Array.isArray(items)) throw new AppError("VALIDATION_FAILED", [{ path: "items", message: "must be an array of records" }]);
  if (items.length === 0) throw new AppError("VALIDATION_FAILED", [{ path: "items", message: "must hold at least one record" }]);
  if (items.length > BATCH_LIMIT) throw batchTooLarge();
  return items;
}

/**
 * `POST /api/v1/stores/{store_id}/<resource>/batch`: up to 1,000 records in one
 * request. The key, rate limit (one unit per record) and store are checked
 * once, before any item; then each item is validated and stored exactly as a
 * push of it alone would be (the same code, its automations), in order, so
 * duplicates of a key apply one after the other and the last wins. One invalid
 * item never rejects the others: each has its own result. All items are
 * written in one transaction, set-based when their keys are distinct (a
 * constant number of statements), else each in a savepoint of its own; should
 * the database fail, nothing of the batch is stored and the request answers
 * 503 (send it again).
 */
function batchProcedure<Body extends z.ZodType, Record extends object>(spec: UpsertSpec<Body, Record>, docs: UpsertDocs) {
  const result = z.object({
    status: z.number().int().meta({ description: "What a push of this item alone would have answered: 201 created, 200 updated, 422 refused; 500: not stored, retry it." }),
    external_id: z.string().nullable().meta({ description: "The item's external_id, as sent (`null` when it had none)." }),
    record: spec.output.optional().meta({ description: "On 201 and 200: the record, as the single upsert answers it." }),
    stale: z.literal(true).optional().meta({ description: "Present when the item was older than the stored record (`source_updated_at`) and not applied." }),
    ignored_fields: z.array(z.string()).optional().meta({ description: "Fields of the item the API does not know, ignored (without strict handling)." }),
    error: z.string().optional().meta({ description: "On 422 and 500: the error's message." }),
    code: errorBodySchema.shape.code.optional().meta({ description: "On 422 and 500: the error's stable code, as an error body's." }),
    details: z.array(errorDetailSchema).optional().meta({ description: "On 422: one entry per failing field of the item." }),
  });
  const output = z.object({
    results: z.array(result).meta({ description: "One result per item, in the order of `items`." }),
    counts: z
      .object({
        created: z.number().int().meta({ description: "Items answered 201." }),
        updated: z.number().int().meta({ description: "Items answered 200." }),
        failed: z.number().int().meta({ description: "Items not stored (422 or 500)." }),
      })
      .meta({ description: "The results, counted." }),
  });
  return storeBodyProcedure
    .meta(rest({
        method: "POST",
        path: `/api/v1/stores/{store_id}/${spec.resource}/batch`,
        tags: [spec.resource],
        summary: `${docs.summary}: up to ${BATCH_LIMIT.toLocaleString("en-US")} at once`,
        description:
          `Each item is stored exactly as \`POST /${spec.resource}\` would store it alone, with its automations, in order (a key repeated in the batch: the last wins). ` +
          "One invalid item never rejects the others. Answers 200 with one result per item. The rate limit counts records, not requests. " +
          "`X-Backfill` and `Prefer: handling=strict` apply to every item.",
        protect: true,
      }, {
        success: { 200: "One result per item, in order" },
        errors: [...STORE_ERRORS, ...BODY_ERRORS],
        body: z.object({ items: z.array(spec.body).min(1).max(BATCH_LIMIT).meta({ description: `1 to ${BATCH_LIMIT.toLocaleString("en-US")} records, each as the single upsert takes it.` }) }),
        example: { items: [spec.example] },
        batch: true,
      }))
    .input(storeParams)
    .output<z.ZodType<object, object>>(output)
    .mutation(async ({ ctx }) => {
      const items = batchItems(ctx.rawBody);
      // Validation needs no database: every item is checked before the transaction opens.
      const parsed = items.map((item) => parseItem(spec, item, ctx.store.country, ctx.strict));
      const results = await inTransaction(ctx.db, (trx) => writeItems({ db: trx, store: ctx.store, options: { backfill: ctx.backfill } }, spec, parsed, ctx));
      const count = (test: (status: number) => boolean) => results.filter((r) => test(r.status)).length;
      return { results, counts: { created: count((s) => s === 201), updated: count((s) => s === 200), failed: count((s) => s >= 400) } };
    });
}

// --- Single pushes that arrive together, written together ---

/**
 * How many writes of one lane (one store, one kind of record, one trigger mode) are under way at once; pushes
 * arriving beyond them wait and go together. On PostgreSQL a write's commit mostly waits for its WAL to be
 * flushed, and commits under way together share a flush; four rather than two: paired, embedded order pushes
 * 1.14x (CPU per push 0.88x), PostgreSQL's 0.99x-1.11x, customer pushes 1.05x (see docs/performance.md).
 */
export const WRITES_PER_LANE = 4;
/** The most pushes one shared write carries. */
export const MOST_PER_WRITE = 200;

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

// --- Idempotency-Key ---

/** How long a first response is replayed, and when a claim whose request never finished may be taken over. */
export const IDEMPOTENCY_TTL_SECONDS = 24 * 3600;
const STALE_CLAIM_SECONDS = 60;
const KEY = /^[\x21-\x7E]{1,255}$/;

export type { IdempotencyRequest };

/** The request's `Idempotency-Key`, and a SHA-256 of its method, path and body. */
export function idempotencyRequestOf(header: string | string[] | undefined, method: string, path: string, body: unknown): IdempotencyRequest | undefined {
  if (header === undefined) return undefined;
  if (typeof header !== "string" || !KEY.test(header)) return { invalidKey: true };
  const hash = createHash("sha256").update(`${method} ${path}\n`);
  if (Buffer.isBuffer(body)) hash.update(body);
  return { key: header, fingerprint: hash.digest("hex") };
}

/** A response stored for a key, answered again exactly: status, body and the first request's id. */
export class ReplayedResponse extends Error {
  constructor(
    readonly status: number,
    readonly body: string | null,
    readonly requestId: string,
  ) {
    super("replayed response");
  }
}

/** What a procedure's run came to, as tRPC's middleware chain reports it. */
type Outcome = { ok: true; data: unknown } | { ok: false; error: unknown };

/**
 * POST, PATCH and DELETE with an `Idempotency-Key` run once per (store, key)
 * for 24 hours: a repeat gets the first response again (marked
 * `Idempotent-Replayed: true`), the key with another request a 422, a repeat
 * while the first still runs a 409. A 5xx is not kept: the retry runs again.
 * `run` is the rest of the request, after authorization; a refusal it throws
 * is kept as its answer like one it returns.
 */
export async function runOnce<R extends Outcome>(ctx: Context, type: string, run: () => Promise<R>): Promise<R> {
  const request = ctx.idempotency;
  const storeId = ctx.response.authorized?.storeId;
  if (type !== "mutation" || request === undefined || storeId === undefined) return run();
  if ("invalidKey" in request) throw new AppError("VALIDATION_FAILED", [{ path: "Idempotency-Key", message: "must be 1 to 255 printable ASCII characters without spaces" }]);

  const claimed = await repo.claimKey(ctx.db, { store_id: storeId, key: request.key, fingerprint: request.fingerprint, request_id: ctx.requestId }, IDEMPOTENCY_TTL_SECONDS, STALE_CLAIM_SECONDS);
  if (!claimed) {
    const stored = await repo.findKey(ctx.db, storeId, request.key);
    if (stored && stored.fingerprint !== request.fingerprint) throw new AppError("IDEMPOTENCY_KEY_REUSED", [{ path: "Idempotency-Key", message: "was first used with another request" }]);
    if (!stored || stored.status === null) throw new AppError("REQUEST_IN_PROGRESS", undefined, { "Retry-After": "1" });
    throw new ReplayedResponse(stored.status, stored.body, stored.request_id);
  }

  const failed = async (error: unknown) => {
    const response = toErrorResponse(error);
    if (response.status < 500) await repo.completeKey(ctx.db, storeId, request.key, response.status, JSON.stringify(response.body));
    else await repo.releaseKey(ctx.db, storeId, request.key).catch(() => undefined);
  };
  let result: R;
  try {
    result = await run();
  } catch (error) {
    await failed(error);
    throw error;
  }
  if (result.ok) {
    const status = ctx.response.status;
    await repo.completeKey(ctx.db, storeId, request.key, status, status === 204 ? null : JSON.stringify(result.data));
  } else {
    await failed(result.error);
  }
  return result;
}
