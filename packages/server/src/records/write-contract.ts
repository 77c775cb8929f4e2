import { errorBodyOf, type ErrorCode, type ErrorDetail, type ErrorWireCode } from "@commerce-ingest/shared";
import type { z } from "zod";
import type { Context } from "../context.js";
import { isDatabaseUnavailable } from "../db/index.js";
import { isRetryable } from "../db/transaction.js";
import { AppError } from "../errors.js";
import { errorForLog } from "../logger.js";
import { parseBody, type PhonePath } from "./body.js";
import type { ServiceCall, Upserted } from "./calls.js";

export type { ServiceCall, Upserted } from "./calls.js";

export type Resource = "orders" | "customers" | "checkouts" | "shipments";

/**
 * A resource's write contract: its body's schema, where the body carries
 * phones, the record it answers, and its one write (see `writeRecords`), a
 * push being a set of one. The single push, the batch and an import's lines
 * are all written by it.
 */
export type UpsertSpec<Body extends z.ZodType, Record extends object> = {
  resource: Resource;
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
  /**
   * Every stored row the write of `body` may read or change, named `<table>:<key>` (its record, the customer it
   * embeds, the contact of a phone, the order it belongs to): two sets of records none of whose names meet write
   * no row in common, so they may be written side by side, in either order.
   */
  touches: (body: z.output<Body>) => readonly string[];
};

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

/** The `external_id` a body names, when it names one as a string. */
export const externalIdOf = (item: unknown) =>
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
