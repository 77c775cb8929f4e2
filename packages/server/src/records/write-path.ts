import { inTransaction } from "../db/transaction.js";
import type { Db, Executor, Trx } from "../db/types.js";
import type { AppError } from "../errors.js";
import type { Upserted } from "./calls.js";
import { byShape, inOneStatement, noneIfStale, recordAnswers } from "./fields.js";

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
  const { keys, keyOf, toRecord } = writes;
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
