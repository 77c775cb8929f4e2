import { errorBodySchema, errorDetailSchema, LIMITS, listQuerySchema, type ErrorCode, type Page } from "@commerce-ingest/shared";
import { z } from "zod";
import { authorize, refuseBodyProblem } from "../tenancy/auth.middleware.js";
import { baseProcedure, rest } from "../trpc.js";
import { runOnce } from "../requests/idempotency.js";
import type { StoreContext } from "../tenancy/store-context.js";
import type { Context } from "../context.js";
import { inTransaction } from "../db/transaction.js";
import { AppError, batchTooLarge } from "../errors.js";
import { parseBody, type PhonePath } from "./body.js";
import type { ServiceCall } from "./calls.js";
import { gatherPushes } from "./gather.js";
import type { ReadBack } from "./read-back.js";
import { parseItem, writeItems, type Resource, type UpsertSpec } from "./write-contract.js";

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
    const authorized = await authorize(ctx, await getRawInput(), meta);
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
      const { record, created, stale } = await push({ db: ctx.db, store: ctx.store, options: { backfill: ctx.backfill } }, body, ctx.logger);
      ctx.response.status = created ? 201 : 200;
      // Its own external_id only: a customer keyed by its phone is not named, as the request log keeps no phone.
      const externalId = (body as { external_id?: unknown }).external_id;
      if (typeof externalId === "string") ctx.response.record = { kind: spec.resource, externalId };
      if (stale) ctx.response.headers = { ...ctx.response.headers, "X-Stale-Write": "ignored" };
      return record;
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

