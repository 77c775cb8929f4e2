import { errorBodyOf, errorBodySchema, errorDetailSchema, LIMITS, listQuerySchema, type ErrorCode, type ErrorDetail, type ErrorWireCode, type Page } from "@commerce-ingest/shared";
import { z } from "zod";
import { authorize, refuseBodyProblem } from "../tenancy/auth.middleware.js";
import { baseProcedure } from "../trpc.js";
import { runOnce } from "../requests/idempotency.js";
import type { StoreContext } from "../tenancy/store-context.js";
import type { Context } from "../context.js";
import { isDatabaseUnavailable } from "../db/index.js";
import { inTransaction, isRetryable } from "../db/transaction.js";
import { AppError, batchTooLarge } from "../errors.js";
import { errorForLog } from "../logger.js";
import { parseBody, type PhonePath } from "./body.js";
import type { ServiceCall, Upserted } from "./calls.js";
import { gatherPushes } from "./gather.js";
import type { ReadBack } from "./read-back.js";

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

type Resource = "orders" | "customers" | "checkouts" | "shipments";

/** The request's body, parsed once; the fields it ignored are named in `X-Ignored-Fields`. */
function parsedBody<S extends z.ZodType>(ctx: Context & { store: StoreContext }, schema: S, phonePaths: readonly PhonePath[]): z.output<S> {
  const { value, ignored } = parseBody(schema, phonePaths, ctx.rawBody ?? {}, ctx.store.country, { strict: ctx.strict });
  if (ignored.length > 0) ctx.response.headers = { ...ctx.response.headers, "X-Ignored-Fields": ignored.join(", ") };
  return value;
}

export type { ServiceCall, Upserted } from "./calls.js";

export type UpsertSpec<Body extends z.ZodType, Record extends object> = {
  resource: Resource;
  summary: string;
  description: string;
  body: Body;
  /** Where the body carries phones: each is read in the store's country and arrives at the service in E.164. */
  phonePaths: readonly PhonePath[];
  /** A realistic body, accepted by a store in the US (a test posts it); its external_id is the resource's example key. */
  example: z.input<Body>;
  output: z.ZodType<Record, Record>;
  /** Errors of the resource's own rules, beyond the ones every upsert can answer. */
  errors?: readonly ErrorCode[];
  /** `stale`: the write was older than the stored record (by `source_updated_at`) and changed nothing. */
  upsert: (call: ServiceCall, body: z.output<Body>) => Promise<Upserted<Record>>;
  /**
   * The same for many records with distinct keys, in a constant number of
   * statements (a batch uses it when it can): one result per body, in order,
   * or the refusal (4xx) a push of that body alone would have answered.
   */
  upsertMany: (call: ServiceCall, bodies: Array<z.output<Body>>) => Promise<Array<Upserted<Record> | AppError>>;
  /** The key a record is stored under, when it is not just its `external_id` (a customer without one is keyed by its phone). */
  keyOf?: (body: z.output<Body>) => string;
};

// `.output<z.ZodType<object, object>>`: tRPC cannot resolve a generic output type, and
// nothing calls these procedures through tRPC's client; the record types callers
// see are the shared schemas', which `spec.output` checks every response against.

/**
 * A store-scoped upsert on `POST /api/v1/stores/{store_id}/<resource>`: the
 * contract's check order (key, rate limit, store, body, rules), the body parsed
 * once, and 201 when the record was created, 200 when it was updated.
 */
/**
 * An upsert, declared once for the single push and the batch (typed by its
 * body schema) from the resource's one write (`write`, see `writeRecords`):
 * a push is a set of one.
 */
export const upsertSpec = <Body extends z.ZodType, Record extends object>(
  spec: Omit<UpsertSpec<Body, Record>, "upsert" | "upsertMany"> & { write: UpsertSpec<Body, Record>["upsertMany"] },
): UpsertSpec<Body, Record> => {
  const { write, ...rest } = spec;
  return {
    ...rest,
    upsert: async (call, body) => {
      const [result] = await write(call, [body]);
      if (result === undefined) throw new Error("a push was not answered");
      if (result instanceof AppError) throw result;
      return result;
    },
    upsertMany: write,
  };
};

function upsertProcedure<Body extends z.ZodType, Record extends object>(spec: UpsertSpec<Body, Record>) {
  // Pushes arriving together are written together (see `gatherPushes`).
  const push = gatherPushes({ upsert: spec.upsert, upsertMany: spec.upsertMany, keyOf: spec.keyOf ?? ((body) => (body as { external_id: string }).external_id) });
  return storeBodyProcedure
    .meta({
      openapi: { method: "POST", path: `/api/v1/stores/{store_id}/${spec.resource}`, tags: [spec.resource], summary: spec.summary, description: spec.description, protect: true },
      contract: {
        success: { 201: "Created: the key was new (or the customer had been erased)", 200: "Updated: a record with this key existed" },
        errors: [...STORE_ERRORS, ...BODY_ERRORS, ...(spec.errors ?? [])],
        body: spec.body,
        example: spec.example as object,
      },
    })
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
    .meta({
      openapi: { method: "PATCH", path: `/api/v1/stores/{store_id}/${spec.resource}/{external_id}`, tags: [spec.resource], summary: spec.summary, description: spec.description, protect: true },
      contract: {
        success: { 200: "Updated (an empty body changes nothing and returns the record)" },
        errors: [...STORE_ERRORS, ...BODY_ERRORS, spec.notFound],
        body: spec.body,
        example: spec.example as object,
      },
    })
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
export function writeProcedures<Body extends z.ZodType, Record extends object>(spec: UpsertSpec<Body, Record>) {
  return { upsert: upsertProcedure(spec), batch: batchProcedure(spec) };
}

/** A resource's list and retrieve operations (see `listProcedure`, `getProcedure`). */
export function readProcedures<Record extends object, Item extends object>(spec: ReadSpec<Record, Item>) {
  return { list: listProcedure(spec), retrieve: getProcedure(spec) };
}

/** `GET /api/v1/stores/{store_id}/<resource>/{external_id}`: the stored record, read back, with the same checks as the writes. */
function getProcedure<Record extends object, Item extends object>(spec: ReadSpec<Record, Item>) {
  return storeProcedure
    .meta({
      openapi: {
        method: "GET",
        path: `/api/v1/stores/{store_id}/${spec.resource}/{external_id}`,
        tags: [spec.resource],
        summary: spec.summaries.retrieve,
        description: "The full stored record: the published response fields and the fields the shop sent. The same keys, statuses and check order as the writes.",
        protect: true,
      },
      contract: { success: { 200: "The stored record" }, errors: [...STORE_ERRORS, spec.read.notFound] },
    })
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
    .meta({
      openapi: {
        method: "GET",
        path: `/api/v1/stores/{store_id}/${spec.resource}`,
        tags: [spec.resource],
        summary: spec.summaries.list,
        description:
          "The store's records as read back one by one, a page at a time (`limit`, default 100, at most 1,000), in the order they last changed, then their id. " +
          "Send the page's `next_cursor` as `cursor` for the next one, until it is `null`. Paging while writes go on returns every record that did not change exactly once, " +
          "and every record that changed meanwhile at least once, in its newest form: a change moves a record to the end. `updated_after` starts from a time instead of the beginning.",
        protect: true,
      },
      contract: { success: { 200: "A page of records" }, errors: [...STORE_ERRORS, "VALIDATION_FAILED"] },
    })
    .input(storeParams.extend(listQuerySchema.shape))
    .output<z.ZodType<object, object>>(spec.page)
    .query(({ ctx, input }) => spec.read.list(ctx.db, ctx.store, input));
}

/** The most records one batch may carry. */
export const BATCH_LIMIT = LIMITS.batchItems;

/** What one item of a batch (or one line of an import) came to. */
export type ItemResult = {
  status: number;
  external_id: string | null;
  record?: object;
  stale?: true;
  ignored_fields?: string[];
  error?: string;
  code?: ErrorWireCode;
  details?: ErrorDetail[];
};

/** The batch's own shape, checked before any item: an object whose `items` holds 1 to 1,000 records. */
function batchItems(raw: Record<string, unknown> | undefined): unknown[] {
  const items = raw?.items;
  if (!Array.isArray(items)) throw new AppError("VALIDATION_FAILED", [{ path: "items", message: "must be an array of records" }]);
  if (items.length === 0) throw new AppError("VALIDATION_FAILED", [{ path: "items", message: "must hold at least one record" }]);
  if (items.length > BATCH_LIMIT) throw batchTooLarge();
  return items;
}

export const refusal = (externalId: string | null, error: AppError): ItemResult => ({ status: error.status, external_id: externalId, ...errorBodyOf(error.code, error.details) });

export type ParsedItem<Body> = { externalId: string | null; value: Body; ignored: string[]; refused?: undefined } | { externalId: string | null; refused: ItemResult };

/**
 * The valid items of a batch written together, set-based, when their keys are
 * distinct (a key repeated must apply in order, one write after the other).
 * Undefined when it cannot be done so: the items are then written one by one,
 * which also tells which item a failure belongs to.
 */
async function upsertTogether<Body, Record extends object>(
  call: ServiceCall,
  upsertMany: (call: ServiceCall, bodies: Body[]) => Promise<Array<Upserted<Record> | AppError>>,
  keyOf: ((body: Body) => string) | undefined,
  parsed: ReadonlyArray<ParsedItem<Body>>,
  ctx: Pick<Context, "logger" | "requestId">,
): Promise<ItemResult[] | undefined> {
  const valid = parsed.flatMap((item) => (item.refused ? [] : [item]));
  const key = (item: (typeof valid)[number]) => (keyOf ? keyOf(item.value) : item.externalId);
  if (valid.length === 0 || new Set(valid.map(key)).size < valid.length) return undefined;
  let written: Array<Upserted<Record> | AppError>;
  try {
    written = await upsertMany(call, valid.map((item) => item.value));
  } catch (error) {
    if (error instanceof AppError || isDatabaseUnavailable(error) || isRetryable(error)) throw error;
    // Its savepoint rolled back: nothing of it stays, and the items go one by one.
    ctx.logger.warn({ err: errorForLog(error), requestId: ctx.requestId }, "batch written item by item");
    return undefined;
  }
  const results = written.values();
  return parsed.map((item) => {
    if (item.refused) return item.refused;
    const result = results.next().value as Upserted<Record> | AppError;
    return result instanceof AppError ? refusal(item.externalId, result) : stored(item, result);
  });
}

const externalIdOf = (item: unknown) =>
  typeof item === "object" && item !== null && "external_id" in item && typeof item.external_id === "string" ? item.external_id : null;

/** One record of a batch or an import, checked as a push of it alone would be: its value, or the refusal it would have answered. */
export function parseItem<Body extends z.ZodType, Record extends object>(spec: UpsertSpec<Body, Record>, item: unknown, country: string | null, strict: boolean): ParsedItem<z.output<Body>> {
  const externalId = externalIdOf(item);
  try {
    return { externalId, ...parseBody(spec.body, spec.phonePaths, item, country, { strict }) };
  } catch (error) {
    if (error instanceof AppError && error.status < 500) return { externalId, refused: refusal(externalId, error) };
    throw error;
  }
}

const stored = <Record extends object>(item: { externalId: string | null; ignored: string[] }, { record, created, stale }: Upserted<Record>): ItemResult => ({
  status: created ? 201 : 200,
  external_id: item.externalId,
  record,
  ...(stale ? { stale: true as const } : {}),
  ...(item.ignored.length > 0 ? { ignored_fields: item.ignored } : {}),
});

/**
 * Writes checked records inside the caller's transaction, as a batch does and
 * an import's chunk does: set-based when their keys are distinct (a constant
 * number of statements), else each alone in a savepoint of its own, in order.
 * One result per record; a refusal is that record's alone. A failure of the
 * database (or one worth running again) is thrown, so that nothing of the
 * transaction stays.
 */
export async function writeItems<Body extends z.ZodType, Record extends object>(
  call: ServiceCall,
  spec: UpsertSpec<Body, Record>,
  parsed: ReadonlyArray<ParsedItem<z.output<Body>>>,
  ctx: Pick<Context, "logger" | "requestId">,
): Promise<ItemResult[]> {
  const together = await upsertTogether(call, spec.upsertMany, spec.keyOf, parsed, ctx);
  if (together) return together;
  const done: ItemResult[] = [];
  for (const item of parsed) {
    if (item.refused) {
      done.push(item.refused);
      continue;
    }
    try {
      done.push(stored(item, await spec.upsert(call, item.value)));
    } catch (error) {
      if (error instanceof AppError && error.status < 500) {
        done.push(refusal(item.externalId, error));
      } else if (error instanceof AppError || isDatabaseUnavailable(error) || isRetryable(error)) {
        // The whole transaction: run again after a deadlock, or answered 503 with nothing stored.
        throw error;
      } else {
        // Ours, not the caller's: this item's savepoint rolled back, so it was not stored; the others go on.
        ctx.logger.error({ err: errorForLog(error), requestId: ctx.requestId }, "batch item failed");
        done.push({ status: 500, external_id: item.externalId, ...errorBodyOf("INTERNAL") });
      }
    }
  }
  return done;
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
function batchProcedure<Body extends z.ZodType, Record extends object>(spec: UpsertSpec<Body, Record>) {
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
    .meta({
      openapi: {
        method: "POST",
        path: `/api/v1/stores/{store_id}/${spec.resource}/batch`,
        tags: [spec.resource],
        summary: `${spec.summary}: up to ${BATCH_LIMIT.toLocaleString("en-US")} at once`,
        description:
          `Each item is stored exactly as \`POST /${spec.resource}\` would store it alone, with its automations, in order (a key repeated in the batch: the last wins). ` +
          "One invalid item never rejects the others. Answers 200 with one result per item. The rate limit counts records, not requests. " +
          "`X-Backfill` and `Prefer: handling=strict` apply to every item.",
        protect: true,
      },
      contract: {
        success: { 200: "One result per item, in order" },
        errors: [...STORE_ERRORS, ...BODY_ERRORS],
        body: z.object({ items: z.array(spec.body).min(1).max(BATCH_LIMIT).meta({ description: `1 to ${BATCH_LIMIT.toLocaleString("en-US")} records, each as the single upsert takes it.` }) }),
        example: { items: [spec.example] },
        batch: true,
      },
    })
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

