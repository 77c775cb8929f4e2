import type { StoreContext } from "../tenancy/access.js";
import type { TriggerOptions } from "../automations/triggers.js";
import type { Db } from "../db/types.js";

/** What an upsert came to: `stale` when the write was older than the stored record (by `source_updated_at`) and changed nothing. */
export type Upserted<Record> = { record: Record; created: boolean; stale: boolean };

/** What a service sees of a request: the database, the authorized store and whether the push is a backfill. */
export type ServiceCall = { db: Db; store: StoreContext; options: TriggerOptions };
