import type { ErrorCode } from "@commerce-ingest/shared";
import { z } from "zod";
import { storeBodyProcedure, storeProcedure } from "../auth/auth.middleware.js";
import type { StoreContext } from "../auth/store-context.js";
import type { TriggerOptions } from "../automations/flows/index.js";
import type { Db } from "../db/types.js";
import { parseBody, type PhonePath } from "./body.js";

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
const storeParams = z.object({ store_id: z.coerce.number().int().positive().meta({ description: "The store's numeric id" }) });
export const recordParams = storeParams.extend({
  external_id: z.string().meta({ description: "The record's external_id, percent-encoded (any character is allowed)" }),
});

type Resource = "orders" | "customers" | "checkouts" | "shipments";

/** What a service sees of a request: the database, the authorized store and whether the push is a backfill. */
export type ServiceCall = { db: Db; store: StoreContext; options: TriggerOptions };

type UpsertSpec<Body extends z.ZodType, Record extends object> = {
  resource: Resource;
  summary: string;
  description: string;
  body: Body;
  /** Where the body carries phones: each is read in the store's country and arrives at the service in E.164. */
  phonePaths: readonly PhonePath[];
  output: z.ZodType<Record, Record>;
  /** Errors of the resource's own rules, beyond the ones every upsert can answer. */
  errors?: readonly ErrorCode[];
  /** `stale`: the write was older than the stored record (by `source_updated_at`) and changed nothing. */
  upsert(call: ServiceCall, body: z.output<Body>): Promise<{ record: Record; created: boolean; stale: boolean }>;
};

// `.output<z.ZodType<object, object>>`: tRPC cannot resolve a generic output type, and
// nothing calls these procedures through tRPC's client; the record types callers
// see are the shared schemas', which `spec.output` checks every response against.

/**
 * A store-scoped upsert on `POST /api/v1/stores/{store_id}/<resource>`: the
 * contract's check order (key, rate limit, store, body, rules), the body parsed
 * once, and 201 when the record was created, 200 when it was updated.
 */
export function upsertProcedure<Body extends z.ZodType, Record extends object>(spec: UpsertSpec<Body, Record>) {
  return storeBodyProcedure
    .meta({
      openapi: { method: "POST", path: `/api/v1/stores/{store_id}/${spec.resource}`, tags: [spec.resource], summary: spec.summary, description: spec.description, protect: true },
      contract: {
        success: { 201: "Created: the key was new (or the customer had been erased)", 200: "Updated: a record with this key existed" },
        errors: [...STORE_ERRORS, ...BODY_ERRORS, ...(spec.errors ?? [])],
        body: spec.body,
      },
    })
    .input(storeParams)
    .use(({ ctx, next }) => next({ ctx: { body: parseBody(spec.body, spec.phonePaths, ctx.rawBody ?? {}, ctx.store.country) } }))
    .output<z.ZodType<object, object>>(spec.output)
    .mutation(async ({ ctx }) => {
      const { record, created, stale } = await spec.upsert({ db: ctx.db, store: ctx.store, options: { backfill: ctx.backfill } }, ctx.body);
      ctx.response.status = created ? 201 : 200;
      if (stale) ctx.response.headers = { ...ctx.response.headers, "X-Stale-Write": "ignored" };
      return record;
    });
}

type PatchSpec<Body extends z.ZodType, Record extends object> = {
  resource: "orders" | "checkouts";
  summary: string;
  description: string;
  body: Body;
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
      contract: { success: { 200: "Updated (an empty body changes nothing and returns the record)" }, errors: [...STORE_ERRORS, ...BODY_ERRORS, spec.notFound], body: spec.body },
    })
    .input(recordParams)
    .use(({ ctx, next }) => next({ ctx: { body: parseBody(spec.body, [], ctx.rawBody ?? {}, ctx.store.country) } }))
    .output<z.ZodType<object, object>>(spec.output)
    .mutation(async ({ ctx, input }) => {
      const { record, stale } = await spec.update({ db: ctx.db, store: ctx.store, options: { backfill: ctx.backfill } }, input.external_id, ctx.body);
      if (stale) ctx.response.headers = { ...ctx.response.headers, "X-Stale-Write": "ignored" };
      return record;
    });
}

type GetSpec<Record extends object> = {
  resource: Resource;
  summary: string;
  output: z.ZodType<Record, Record>;
  /** What an unknown (or erased) external_id answers. */
  notFound: ErrorCode;
  get(call: Omit<ServiceCall, "options">, externalId: string): Promise<Record>;
};

/** `GET /api/v1/stores/{store_id}/<resource>/{external_id}`: the stored record, read back, with the same checks as the writes. */
export function getProcedure<Record extends object>(spec: GetSpec<Record>) {
  return storeProcedure
    .meta({
      openapi: {
        method: "GET",
        path: `/api/v1/stores/{store_id}/${spec.resource}/{external_id}`,
        tags: [spec.resource],
        summary: spec.summary,
        description: "The full stored record: the published response fields and the fields the shop sent. The same keys, statuses and check order as the writes.",
        protect: true,
      },
      contract: { success: { 200: "The stored record" }, errors: [...STORE_ERRORS, spec.notFound] },
    })
    .input(recordParams)
    .output<z.ZodType<object, object>>(spec.output)
    .query(({ ctx, input }) => spec.get({ db: ctx.db, store: ctx.store }, input.external_id));
}

export { storeProcedure };
