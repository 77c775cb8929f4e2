import { isStaleWriteError } from "../db/sql.js";
import { inStatement } from "../db/transaction.js";
import type { Db } from "../db/types.js";

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

export function sharedOptionalColumns(input: SharedOptional): SharedOptionalColumns {
  const columns: SharedOptionalColumns = {};
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
 * updated), else as stored (a stale write, which changed nothing).
 */
export function recordAnswers<Row, Record>(
  keys: readonly string[],
  written: ReadonlyArray<Row & { inserted: boolean }>,
  stored: readonly Row[],
  keyOf: (row: Row) => string,
  toRecord: (row: Row) => Record,
): Array<{ record: Record; created: boolean; stale: boolean }> {
  const writtenBy = new Map(written.map((row) => [keyOf(row), row]));
  const storedBy = new Map(stored.map((row) => [keyOf(row), row]));
  return keys.map((key) => {
    const row = writtenBy.get(key);
    if (row) return { record: toRecord(row), created: row.inserted, stale: false };
    const found = storedBy.get(key);
    if (!found) throw new Error("a record was neither written nor found");
    return { record: toRecord(found), created: false, stale: true };
  });
}

/** The given fields that are not `undefined`: what a merge writes. */
export function presentOnly<T extends Record<string, unknown>>(fields: T): Partial<T> {
  const present: Partial<T> = {};
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
  for (const write of writes) {
    const shape = Object.keys(fields(write)).sort().join();
    const group = shapes.get(shape);
    if (group) group.push(write);
    else shapes.set(shape, [write]);
  }
  const order = (a: W, b: W) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0);
  return [...shapes.values()].map((group) => group.sort(order));
}

/** The writes (grouped by `byShape`) when they are of one set of fields, so one statement writes them all; otherwise nothing. */
export function onlyGroup<W>(groups: readonly W[][]): W[] | undefined {
  return groups.length === 1 ? groups[0] : undefined;
}
