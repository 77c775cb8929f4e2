import type { StoreContext } from "../tenancy/access.js";
import type { TriggerOptions } from "../automations/triggers.js";
import type { Db } from "../db/types.js";

/**
 * What an upsert came to: `stale` when the write was older than the stored
 * record (by `source_updated_at`) and changed nothing. `record` is absent
 * only when the caller asked for statuses alone (see `WriteOptions`).
 */
export type Upserted<Record> = { record: Record | undefined; created: boolean; stale: boolean };

/**
 * How records are written: as a backfill (see `TriggerOptions`), and
 * `statusesOnly` when the caller reads of each record only whether it was
 * created or refused, not the record (an import's chunk, which keeps counts
 * and refusals): nothing of the records is answered.
 */
export type WriteOptions = TriggerOptions & { statusesOnly?: true | undefined };

/** What a service sees of a request: the database, the authorized store and how its records are written. */
export type ServiceCall = { db: Db; store: StoreContext; options: WriteOptions };

/** The record a push's upsert answered: always there, as a push never asks for statuses alone. */
export function recordOf<Record>({ record }: Upserted<Record>): Record {
  if (record === undefined) throw new Error("a push's record was not answered");
  return record;
}
