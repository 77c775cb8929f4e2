import { parsePhoneNumberFromString, type CountryCode } from "libphonenumber-js/max";
import type { IncomingHttpHeaders } from "node:http";
import { LRUCache } from "lru-cache";
import { errorBodyOf, type ErrorCode, type ErrorDetail, type ErrorWireCode } from "@commerce-ingest/shared";
import { z } from "zod";
import type { Context } from "../context.js";
import { isDatabaseUnavailable } from "../db/index.js";
import { inStatement, inTransaction, isRetryable, isStaleWriteError, planForAnyValues } from "../db/sql.js";
import type { Db, Executor, Trx } from "../db/types.js";
import { AppError } from "../errors.js";
import { errorForLog } from "../logger.js";
import { unstorableText } from "../text.js";
import { toDetails } from "../validation.js";
import { acceptedValue } from "./accepted.js";
import type { ServiceCall, Upserted } from "./calls.js";
export type { ServiceCall, Upserted } from "./calls.js";

/*
 * The one write path of the four resources, in the order a record takes it:
 * its body read as JSON, its phones read in E.164, the body checked against
 * its schema, then its resource's write contract (`UpsertSpec`) applied to a
 * push, a batch or an import's lines alike, and the records written in one
 * statement or one transaction (`writeRecords`). Each resource's own contract
 * sits in its service (`records/<resource>/<resource>.service.ts`).
 */

// --- A body as JSON ---

export const MAX_JSON_DEPTH = 32;

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** A field's place in the body, from its parent: spelled out only when a problem names it. */
type Path = { key: string; parent: Path | undefined } | undefined;

const spelled = (path: Path): string => (path === undefined ? "" : path.parent === undefined ? path.key : `${spelled(path.parent)}.${path.key}`);

/**
 * Text that may hold what PostgreSQL cannot store: in JSON, a NUL character or
 * a lone surrogate can only come as a `\u` escape (raw, the one is a syntax
 * error and the other invalid UTF-8). A body without such an escape has no
 * text to check, only its depth.
 */
const MAYBE_UNSTORABLE = /\\u(?:0000|d[89a-f])/i;

/**
 * Finds what PostgreSQL cannot store, so it is a 422 on the field rather than a
 * failed write: NUL characters and lone surrogates (when `texts`), and nesting
 * deeper than any real payload needs.
 */
function unstorable(value: unknown, path: Path, depth: number, texts: boolean, details: ErrorDetail[], tally: { values: number }): void {
  if (details.length >= 20) return;
  tally.values++;
  if (typeof value === "string") {
    const problem = texts ? unstorableText(value) : undefined;
    if (problem) details.push({ path: spelled(path), message: problem });
    return;
  }
  if (typeof value !== "object" || value === null) return;
  if (depth >= MAX_JSON_DEPTH) {
    details.push({ path: spelled(path), message: `must not be nested more than ${MAX_JSON_DEPTH} levels deep` });
    return;
  }
  for (const key in value) {
    const child = (value as Record<string, unknown>)[key];
    // A field's path is made only to descend into it or to name a problem: most fields are values without one.
    if (!texts && (typeof child !== "object" || child === null)) {
      tally.values++;
      continue;
    }
    const field: Path = { key, parent: path };
    const problem = texts ? unstorableText(key) : undefined;
    if (problem) details.push({ path: spelled(field), message: problem });
    unstorable(child, field, depth + 1, texts, details, tally);
  }
}

/**
 * What a parsed body may take in memory at most, from its size and its count
 * of values: the bytes as received and as text (up to two bytes a character),
 * and 128 bytes a value, what V8 takes for an empty object in an array or a
 * key of a large object, the costliest shapes (1 MiB of `[{},{},...]` takes
 * 22 MiB). See `BODY_MEMORY_BYTES`.
 */
export const weightOf = (bytes: number, values: number) => 3 * bytes + 128 * values;

/**
 * Reads the body the raw parser buffered as a JSON object, with its weight (see
 * `weightOf`). Its problems are returned, not thrown: they are reported only
 * after authorization.
 */
export function readJsonObject(req: { headers: IncomingHttpHeaders; body?: unknown }): { value: Record<string, unknown>; weight: number } | { problem: AppError } {
  const mediaType = (req.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase();
  if (mediaType !== "application/json") return { problem: new AppError("UNSUPPORTED_MEDIA_TYPE") };
  const raw: unknown = req.body;
  let text: string;
  try {
    text = utf8.decode(Buffer.isBuffer(raw) ? raw : Buffer.alloc(0));
  } catch {
    return { problem: new AppError("MALFORMED_JSON") };
  }
  const tally = { values: 0 };
  const read = jsonObjectOf(text, tally);
  return "problem" in read ? read : { value: read.value, weight: weightOf(text.length, tally.values) };
}

/**
 * One JSON object, as a push's body or an import's line holds it: `MALFORMED_JSON`
 * when the text is not JSON, a 422 when it is not an object or holds what
 * PostgreSQL cannot store.
 */
export function jsonObjectOf(text: string, tally = { values: 0 }): { value: Record<string, unknown> } | { problem: AppError } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { problem: new AppError("MALFORMED_JSON") };
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return { problem: new AppError("VALIDATION_FAILED", [{ path: "", message: "must be a JSON object" }]) };
  }
  const details: ErrorDetail[] = [];
  unstorable(value, undefined, 0, MAYBE_UNSTORABLE.test(text), details, tally);
  if (details.length > 0) return { problem: new AppError("VALIDATION_FAILED", details) };
  return { value: { ...(value as Record<string, unknown>) } };
}

// --- Phones ---

export type PhoneResult = { ok: true; e164: string } | { ok: false; message: string };

/**
 * How many phones (as sent, with the country they were read in) the process remembers the reading of: a
 * backfill of a million orders names some 50,000 customers, whose phones then come round again and again.
 * Some 10 MB at most: an entry is the phone's text as it came (kept) and, for a phone sent as it is stored, no more.
 */
export const PHONES_REMEMBERED = 100_000;

/**
 * A reader of phones that remembers its readings, the least recently used
 * forgotten first: a shop sends one customer's phone again and again (its
 * checkout, its customer, each of its orders), and reading one with the full
 * metadata is the costliest part of checking a body. A reading depends only on
 * the text and (for a phone without `+`) the country, so a remembered one is
 * exactly what reading it again would give. `lru-cache` forgets in constant
 * time: a `Map` evicted from its front (`keys().next()`) walks past every entry
 * deleted before it, 50-60 µs a phone once full (an import of a million
 * customers ran 1.87 times as fast without it).
 */
export function phoneReader(capacity: number): (input: string, defaultCountry: string | null) => PhoneResult {
  /** `true`: valid and already in E.164, the common case, kept without a copy. */
  const readings = new LRUCache<string, PhoneResult | true>({ max: capacity });
  return (input, defaultCountry) => {
    // An international phone reads the same in every country: its text alone is its key.
    const key = input.startsWith("+") ? input : `${defaultCountry ?? ""}\u0000${input}`;
    const known = readings.get(key);
    if (known !== undefined) return known === true ? { ok: true, e164: input } : known;
    const result = readPhone(input, defaultCountry);
    readings.set(key, result.ok && result.e164 === input ? true : result);
    return result;
  };
}

/**
 * Normalises a phone to E.164. A number without `+` is read in the store's
 * default country; without one it must be international. The full metadata
 * set is used so that impossible numbers (unassigned ranges) are refused, not
 * merely wrong lengths.
 */
export const normalizePhone = phoneReader(PHONES_REMEMBERED);

function readPhone(input: string, defaultCountry: string | null): PhoneResult {
  const text = input.trim();
  const international = text.startsWith("+");
  if (!international && !defaultCountry) {
    return { ok: false, message: "must be in international format (+ and country code): the store has no default country" };
  }
  const parsed = parsePhoneNumberFromString(text, {
    defaultCountry: international ? undefined : (defaultCountry as CountryCode),
    extract: false,
  });
  if (!parsed || !parsed.isValid()) return { ok: false, message: "is not a valid phone number" };
  return { ok: true, e164: parsed.number };
}

// --- A body checked against its schema ---

/** Where a phone sits in a body: `["phone"]`, `["customer", "phone"]`. */
export type PhonePath = readonly string[];

type Node = Record<string, unknown>;
const isNode = (value: unknown): value is Node => typeof value === "object" && value !== null;

function at(value: unknown, path: PhonePath): unknown {
  return path.reduce<unknown>((node, key) => (isNode(node) ? node[key] : undefined), value);
}

function setAt(value: unknown, path: PhonePath, replacement: string): void {
  const parent = at(value, path.slice(0, -1));
  const key = path[path.length - 1];
  if (isNode(parent) && key !== undefined) parent[key] = replacement;
}

const shapes = new WeakMap<z.ZodType, Record<string, z.ZodType> | null>();

/** The object schema inside optional/nullable wrappers, if the field is an object (found once per schema). */
function objectShape(schema: z.ZodType): Record<string, z.ZodType> | undefined {
  let shape = shapes.get(schema);
  if (shape === undefined) {
    let inner: z.ZodType = schema;
    while (inner instanceof z.ZodOptional || inner instanceof z.ZodNullable) inner = inner.unwrap() as z.ZodType;
    shape = inner instanceof z.ZodObject ? inner.shape : null;
    shapes.set(schema, shape);
  }
  return shape ?? undefined;
}

/** No field unknown: one list for every body, as a chunk's checked lines are kept until their merge. */
const NONE_UNKNOWN: readonly string[] = Object.freeze([]);

/** Dotted paths of the fields the schema does not know (free-form fields, such as metadata, have none). */
export function unknownFields(schema: z.ZodType, value: unknown, prefix = ""): readonly string[] {
  const unknown: string[] = [];
  collectUnknown(schema, value, prefix, unknown);
  return unknown.length === 0 ? NONE_UNKNOWN : unknown;
}

function collectUnknown(schema: z.ZodType, value: unknown, prefix: string, unknown: string[]): void {
  const shape = objectShape(schema);
  if (!shape || !isNode(value) || Array.isArray(value)) return;
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    // Own fields of the shape only: `constructor` or `__proto__` in a body is as unknown as any other name.
    const known = Object.hasOwn(shape, key) ? shape[key] : undefined;
    const field = value[key];
    if (!known) unknown.push(`${prefix}${key}`);
    else if (isNode(field) && !Array.isArray(field)) collectUnknown(known, field, `${prefix}${key}.`, unknown);
  }
}

/** What the parser made of a body: its value, and the fields it ignored. */
export type ParsedBody<T> = { value: T; ignored: readonly string[] };

/**
 * The one place a body is checked: its schema (the shared zod schema, which
 * says what each field accepts) and its phones, read in the store's country
 * and normalised to E.164. One 422 names every failing field, phones included.
 * What comes back is the parsed body with its phones in E.164.
 */
export function parseBody<S extends z.ZodType>(
  schema: S,
  phonePaths: readonly PhonePath[],
  raw: unknown,
  country: string | null,
  options: { strict: boolean } = { strict: false },
): ParsedBody<z.output<S>> {
  // A body the schema accepts is read without zod's bookkeeping; one it may refuse, by zod, which names each failing field.
  const accepted = acceptedValue(schema, raw);
  const result = accepted ? { success: true as const, data: accepted.value } : schema.safeParse(raw);
  const details: ErrorDetail[] = result.success ? [] : toDetails(result.error.issues);
  const ignored = unknownFields(schema, raw);
  // `Prefer: handling=strict`: a field the API does not know (a typo, a read-only field) is an error, not silently dropped.
  if (options.strict) for (const path of ignored) details.push({ path, message: "unknown field" });
  const normalized: Array<[PhonePath, string]> = [];
  for (const path of phonePaths) {
    const dotted = path.join(".");
    const phone = at(raw, path);
    if (typeof phone !== "string" || details.some((detail) => detail.path === dotted)) continue;
    const phoneResult = normalizePhone(phone, country);
    if (phoneResult.ok) normalized.push([path, phoneResult.e164]);
    else details.push({ path: dotted, message: phoneResult.message });
  }
  if (!result.success || details.length > 0) throw new AppError("VALIDATION_FAILED", details);
  for (const [path, e164] of normalized) setAt(result.data, path, e164);
  return { value: result.data, ignored };
}

// --- The write contract ---

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
  ignored_fields?: readonly string[];
  error?: string;
  code?: ErrorWireCode;
  details?: ErrorDetail[];
};

export const refusal = (externalId: string | null, error: AppError): ItemResult => ({ status: error.status, external_id: externalId, ...errorBodyOf(error.code, error.details) });

export type ParsedItem<Body> = { externalId: string | null; value: Body; ignored: readonly string[]; refused?: undefined } | { externalId: string | null; refused: ItemResult };

/** Set-based writes of a batch or an import's chunk that failed for a reason of the service's own (see `upsertTogether`), for /metrics. */
export const togetherFailed = { count: 0 };

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
  const valid = parsed.filter((item): item is Exclude<ParsedItem<Body>, { refused: ItemResult }> => !item.refused);
  const key = (item: (typeof valid)[number]) => (keyOf ? keyOf(item.value) : item.externalId);
  if (valid.length === 0 || new Set(valid.map(key)).size < valid.length) return undefined;
  let written: Array<Upserted<Record> | AppError>;
  try {
    written = await upsertMany(call, valid.map((item) => item.value));
  } catch (error) {
    if (error instanceof AppError || isDatabaseUnavailable(error) || isRetryable(error)) throw error;
    // Its savepoint rolled back: nothing of it stays, and the items go one by one (which tells whose it was). Right
    // answers, but each such write is a failure of the service's own, counted for /metrics: an unforeseen one would
    // otherwise only show as batches several times slower.
    togetherFailed.count++;
    ctx.logger.error({ err: errorForLog(error), requestId: ctx.requestId }, "batch written item by item");
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
    const { value, ignored } = parseBody(spec.body, spec.phonePaths, item, country, { strict });
    return { externalId, value, ignored };
  } catch (error) {
    if (error instanceof AppError && error.status < 500) return { externalId, refused: refusal(externalId, error) };
    throw error;
  }
}

function stored<Record extends object>(item: { externalId: string | null; ignored: readonly string[] }, { record, created, stale }: Upserted<Record>): ItemResult {
  const result: ItemResult = { status: created ? 201 : 200, external_id: item.externalId, record };
  if (stale) result.stale = true;
  if (item.ignored.length > 0) result.ignored_fields = item.ignored;
  return result;
}

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
  await planForAnyValues(call.db);
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

// --- Writing records ---

/** A statement's written rows, each saying whether it created its record. */
type Written<Row> = ReadonlyArray<Row & { inserted: boolean }>;

/**
 * How a resource writes a set of its records (see `writeRecords`): each
 * record's key in order, the one statement that writes them all when it can,
 * the transaction that writes them otherwise, and how a stored record is read
 * and answered.
 */
export type RecordWrites<Row, Record> = {
  keys: readonly string[];
  /**
   * The records (with what they carry: customers, links to orders) in one
   * statement, atomic by itself, that fails whole as a stale write when one of
   * them is not written (older than its stored record, or its order unknown);
   * none when they are not of one set of fields.
   */
  together: ((db: Db) => Promise<Written<Row>>) | undefined;
  /**
   * The same in a transaction, each record left out that must be: the rows
   * written, and by key the refusal of each record left out for a reason of
   * its own (a shipment's unknown order); one left out and not refused was stale.
   */
  separately: (trx: Trx) => Promise<{ written: Written<Row>; refused?: ReadonlyMap<string, AppError> }>;
  stored: (db: Executor, keys: readonly string[]) => Promise<readonly Row[]>;
  keyOf: (row: Row) => string;
  toRecord: (row: Row) => Record;
  /** The caller reads only whether each record was created (see `WriteOptions`): the rows carry their id and key alone, and no record is made of them. */
  statusesOnly?: true | undefined;
};

/**
 * The one write path of every entry (a push, which is a set of one, pushes
 * gathered, a batch, an import's chunk): the records in one statement when
 * they are of one set of fields, one round trip with no transaction to open or
 * commit; when that statement fails whole (a record older than its stored
 * one), or the fields differ, in a transaction that leaves out what must not
 * be written. Each record is stored, answered and triggers as it would pushed
 * alone: created, updated, or (stale) the stored record, changed by nothing.
 */
export async function writeRecords<Row, Record>(db: Db, writes: RecordWrites<Row, Record>): Promise<Array<Upserted<Record> | AppError>> {
  const { keys, keyOf } = writes;
  const toRecord = writes.statusesOnly ? undefined : writes.toRecord;
  const together = writes.together && (await inOneStatement(db, writes.together).catch(noneIfStale));
  if (together) return recordAnswers(keys, together, [], keyOf, toRecord);
  return inTransaction(db, async (trx) => {
    const { written, refused = new Map<string, AppError>() } = await writes.separately(trx);
    const writtenKeys = new Set(written.map(keyOf));
    const answered = keys.filter((key) => !refused.has(key));
    const stale = await writes.stored(trx, answered.filter((key) => !writtenKeys.has(key)));
    const answers = recordAnswers(answered, written, stale, keyOf, toRecord);
    let next = 0;
    return keys.map((key) => refused.get(key) ?? answers[next++] ?? failNoAnswer());
  });
}

function failNoAnswer(): never {
  throw new Error("a record was not answered");
}

/** Writes grouped by the fields they carry (see `byShape`), one statement per group; every group's rows. */
export async function inGroups<W extends object, Row>(writes: readonly W[], key: (write: W) => string, write: (group: W[]) => Promise<Written<Row>>): Promise<Written<Row>> {
  const rows: Array<Row & { inserted: boolean }> = [];
  for (const group of byShape(writes, (one) => one, key)) rows.push(...(await write(group)));
  return rows;
}

// --- What upserts share ---

/** Tags keep their order; repeats after the first are dropped. */
export function uniqueTags(tags: readonly string[] | null | undefined): string[] {
  return [...new Set(tags ?? [])];
}

/**
 * The merge rule of every upsert and PATCH, for the optional fields most
 * records share: present replaces, `null` clears, absent keeps (is left out).
 */
export type SharedOptional = {
  currency?: string | null | undefined;
  tags?: readonly string[] | null | undefined;
  metadata?: Record<string, unknown> | null | undefined;
  line_items?: ReadonlyArray<Record<string, unknown>> | null | undefined;
};

export type SharedOptionalColumns = {
  currency?: string | null;
  /** As a list: statements take it as a `text[]` parameter. */
  tags?: string[];
  metadata?: string | null;
  line_items?: string | null;
};

/** The shared optional fields `input` carries, as columns: set on `columns` when given, else on a new object. */
export function sharedOptionalColumns(input: SharedOptional): SharedOptionalColumns;
export function sharedOptionalColumns<C extends object>(input: SharedOptional, columns: C): C & SharedOptionalColumns;
export function sharedOptionalColumns(input: SharedOptional, columns: SharedOptionalColumns = {}): SharedOptionalColumns {
  if (input.currency !== undefined) columns.currency = input.currency === null ? null : input.currency.toUpperCase();
  if (input.tags !== undefined) columns.tags = uniqueTags(input.tags);
  if (input.metadata !== undefined) columns.metadata = input.metadata === null ? null : JSON.stringify(input.metadata);
  if (input.line_items !== undefined) columns.line_items = input.line_items === null ? null : JSON.stringify(input.line_items);
  return columns;
}

/** A write older than the stored record (by `source_updated_at`): its transaction rolls back, nothing is triggered. */
export class StaleWrite extends Error {
  constructor() {
    super("a write older than the stored record");
  }
}

/** Runs a push written in one statement (see `inStatement`); one that turned out stale fails with `StaleWrite`, having left nothing. */
export async function inOneStatement<T>(db: Db, work: (db: Db) => Promise<T>): Promise<T> {
  try {
    return await inStatement(db, work);
  } catch (error) {
    if (isStaleWriteError(error)) throw new StaleWrite();
    throw error;
  }
}

/** For a strict write's `catch`: a stale write comes to nothing (`undefined`), any other failure stays one. */
export function noneIfStale(error: unknown): undefined {
  if (error instanceof StaleWrite) return undefined;
  throw error;
}

/**
 * Each push's answer, in order, by its key: its record as written (created or
 * updated), else as stored (a stale write, which changed nothing); with no
 * `toRecord`, whether it was created or stale alone.
 */
export function recordAnswers<Row, Record>(
  keys: readonly string[],
  written: ReadonlyArray<Row & { inserted: boolean }>,
  stored: readonly Row[],
  keyOf: (row: Row) => string,
  toRecord: ((row: Row) => Record) | undefined,
): Array<Upserted<Record>> {
  const writtenBy = new Map(written.map((row) => [keyOf(row), row]));
  const storedBy = new Map(stored.map((row) => [keyOf(row), row]));
  return keys.map((key) => {
    const row = writtenBy.get(key);
    if (row) return { record: toRecord?.(row), created: row.inserted, stale: false };
    const found = storedBy.get(key);
    if (!found) throw new Error("a record was neither written nor found");
    return { record: toRecord?.(found), created: false, stale: true };
  });
}

/** The given fields that are not `undefined`, what a merge writes: set on `present` when given, else on a new object. */
export function presentOnly<T extends Record<string, unknown>>(fields: T): Partial<T>;
export function presentOnly<T extends Record<string, unknown>, P extends object>(fields: T, present: P): P & Partial<T>;
export function presentOnly(fields: Record<string, unknown>, present: Record<string, unknown> = {}): Record<string, unknown> {
  for (const key in fields) if (fields[key] !== undefined) present[key] = fields[key];
  return present;
}

/**
 * Writes grouped by the fields they carry, so that each group is one
 * multi-row statement (a batch from one shop usually has one); each group in
 * key order, so that two batches sharing rows lock them in the same order.
 */
export function byShape<W extends object>(writes: readonly W[], fields: (write: W) => object, key: (write: W) => string): W[][] {
  // A push alone is its own group: nothing to compare.
  if (writes.length <= 1) return writes.length === 0 ? [] : [[...writes]];
  const shapes = new Map<string, W[]>();
  // Records built by one path mostly list the same fields in the same order as the one before: such a record joins
  // that one's group with nothing made; the others are sorted into theirs by the names of their fields.
  let last: { names: string[]; group: W[] } | undefined;
  for (const write of writes) {
    const carried = fields(write);
    if (last && namesAre(carried, last.names)) {
      last.group.push(write);
      continue;
    }
    const names = Object.keys(carried);
    const shape = [...names].sort().join();
    let group = shapes.get(shape);
    if (!group) shapes.set(shape, (group = []));
    group.push(write);
    last = { names, group };
  }
  const order = (a: W, b: W) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0);
  return [...shapes.values()].map((group) => group.sort(order));
}

/** Whether `object`'s own fields are `names`, in that order. */
function namesAre(object: object, names: readonly string[]): boolean {
  let index = 0;
  for (const name in object) if (names[index++] !== name) return false;
  return index === names.length;
}

/** The writes (grouped by `byShape`) when they are of one set of fields, so one statement writes them all; otherwise nothing. */
export function onlyGroup<W>(groups: readonly W[][]): W[] | undefined {
  return groups.length === 1 ? groups[0] : undefined;
}
