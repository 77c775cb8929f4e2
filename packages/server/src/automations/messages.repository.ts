import { sql } from "kysely";
import type { Flow, MessageStatus } from "@commerce-ingest/shared";
import type { Executor, RecordType, Trx } from "../db/types.js";

export type MessageFilter = {
  flow?: Flow | undefined;
  status?: MessageStatus | undefined;
  /** The customer's `external_id`. */
  customer?: string | undefined;
  /** The order's `external_id` (the messages its runs sent). */
  order?: string | undefined;
  /** The record a run was about (a record's page). */
  record?: { type: RecordType; externalId: string } | undefined;
  /** Messages to this customer (a customer's page). */
  customerId?: number | undefined;
  /** Older than the message of this id (cursor paging, newest first). */
  before?: string | undefined;
};

/** A store's messages, newest first, each with its run (its status, attempts, next try and record) and its customer's key. */
export function listStoreMessages(db: Executor, storeId: number, limit: number, filter: MessageFilter = {}) {
  let query = db
    .selectFrom("messages as m")
    .innerJoin("automation_jobs as j", "j.id", "m.job_id")
    .leftJoin("customers as c", "c.id", "m.customer_id")
    .select([
      "m.id",
      "m.flow",
      "m.status",
      "m.to_phone",
      "m.content",
      "m.provider",
      "m.created_at",
      "m.sent_at",
      "j.id as run_id",
      "j.status as run_status",
      "j.attempts",
      "j.last_error",
      "j.run_at",
      "j.record_type",
      "j.record_external_id",
      "c.external_id as customer_external_id",
    ])
    .where("m.store_id", "=", storeId);
  if (filter.flow) query = query.where("m.flow", "=", filter.flow);
  if (filter.status) query = query.where("m.status", "=", filter.status);
  if (filter.customer !== undefined) query = query.where("c.external_id", "=", filter.customer);
  if (filter.customerId !== undefined) query = query.where("m.customer_id", "=", filter.customerId);
  if (filter.order !== undefined) query = query.where("j.record_type", "=", "order").where("j.record_external_id", "=", filter.order);
  if (filter.record) query = query.where("j.record_type", "=", filter.record.type).where("j.record_external_id", "=", filter.record.externalId);
  // By the cursor's own row: its time to the microsecond (the API's timestamps stop at the millisecond).
  if (filter.before) query = query.where(sql<boolean>`(m.created_at, m.id) < (select b.created_at, b.id from messages b where b.id = ${filter.before}::uuid and b.store_id = ${storeId})`);
  return query.orderBy("m.created_at", "desc").orderBy("m.id", "desc").limit(limit).execute();
}

/** A record's automation runs, oldest first. */
export function runsOfRecord(db: Executor, storeId: number, type: RecordType, externalId: string, limit: number) {
  return db
    .selectFrom("automation_jobs")
    .select(["id", "flow", "status", "attempts", "last_error", "run_at", "finished_at", "created_at"])
    .where("store_id", "=", storeId)
    .where("record_type", "=", type)
    .where("record_external_id", "=", externalId)
    .orderBy("id")
    .limit(limit)
    .execute();
}

/** A message of the store, locked with its run until the transaction ends. */
export function lockMessage(trx: Trx, storeId: number, messageId: string) {
  return trx
    .selectFrom("messages as m")
    .innerJoin("automation_jobs as j", "j.id", "m.job_id")
    .select(["m.id", "m.status", "m.job_id", "j.status as run_status"])
    .where("m.store_id", "=", storeId)
    .where("m.id", "=", messageId)
    .forUpdate()
    .executeTakeFirst();
}

/**
 * A failed message's run due again now with its attempts afresh, and the message pending: the worker delivers the
 * same message (same id) as it would have. The attempts it had stay in `delivery_attempts`.
 */
export async function requeueFailed(trx: Trx, jobId: number, messageId: string): Promise<void> {
  await trx
    .updateTable("automation_jobs")
    .set({ status: "pending", run_at: sql<Date>`now()`, attempts: 0, locked_by: null, locked_until: null, finished_at: null, updated_at: sql<Date>`now()` })
    .where("id", "=", jobId)
    .where("status", "=", "failed")
    .execute();
  await trx.updateTable("messages").set({ status: "pending" }).where("id", "=", messageId).where("status", "=", "failed").execute();
}
