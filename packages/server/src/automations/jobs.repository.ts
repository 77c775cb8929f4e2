import { sql, type ExpressionBuilder, type QueryCreator, type RawBuilder, type SelectQueryBuilder, type Selectable } from "kysely";
import type { Flow } from "@commerce-ingest/shared";
import { anyId, now, statement, type ValueOf } from "../db/sql.js";
import type { Database, Executor, JobRow, JobStatus, MessageRow, MessageTable, RecordType, Trx } from "../db/types.js";

/**
 * The jobs a write made in one statement calls for, chosen in SQL from the rows
 * it wrote: each of `rows` is a select of (store_id, flow, dedupe_key,
 * record_type, record_id, record_external_id, customer_id, payload, run_at), as
 * `withTriggers` builds them from the flows' triggers. Recorded unless one with
 * its key exists (that key is what makes a flow fire once); a statement's
 * data-modifying CTE.
 */
export function insertJobRows<DB extends Database>(qc: QueryCreator<DB>, rows: ReadonlyArray<RawBuilder<unknown>>) {
  // Any statement's CTEs, over the tables every statement has.
  return (qc as unknown as QueryCreator<Database>)
    .insertInto("automation_jobs")
    .columns(["store_id", "flow", "dedupe_key", "record_type", "record_id", "record_external_id", "customer_id", "payload", "run_at"])
    .expression(sql<never>`${sql.join(rows, sql` union all `)}`)
    .onConflict((oc) => oc.column("dedupe_key").doNothing());
}

/** A job ended without running, and why. */
const cancelledBecause = (reason: string | RawBuilder<string>) => ({ status: sql.lit("cancelled" as const), last_error: reason, finished_at: now(), updated_at: now() });

type PendingJobs = SelectQueryBuilder<Database, "automation_jobs", { id: number }>;

/**
 * Cancels the pending jobs `select` narrows down, with `reason`, but for those
 * a worker holds at this moment (it takes due jobs in the transaction that
 * runs them): those are left to their run, whose flow checks again, as a job
 * already running does. So a push or an erasure never waits for a job (the
 * last in the lock order: a worker holds its jobs, then waits for contacts).
 *
 * Jobs are locked `for no key update`, never `for update`, here as by the
 * worker: a foreign key to a job (a message's) takes a key-share lock, which
 * then never waits for a job's holder.
 */
function cancelUnheld(qc: QueryCreator<Database>, select: (jobs: PendingJobs) => PendingJobs, reason: string | RawBuilder<string>) {
  return qc
    .updateTable("automation_jobs")
    .set(cancelledBecause(reason))
    .where(pendingByOtherIndexes)
    .where("id", "in", (eb) => select(eb.selectFrom("automation_jobs").select("id").where(pendingByOtherIndexes)).forNoKeyUpdate().skipLocked());
}

/**
 * `status = 'pending'`, said as "none of the other statuses" (the table's
 * check allows five), so that PostgreSQL cannot prove from it that the index
 * of due jobs (`where status in ('pending', 'running')`) holds the rows, and
 * never reads it for a cancellation: it keeps an entry for every job written
 * until a vacuum, and with statistics saying few jobs are pending, plans took
 * it for cheaper than the job's own index, then read thousands of dead
 * entries at each push (100 ms a push, a batch past the statement timeout, in
 * runs of the benchmark on a cluster without autovacuum).
 */
const pendingByOtherIndexes = sql<boolean>`status not in ('running', 'succeeded', 'failed', 'cancelled')`;

/**
 * Cancels the pending recoveries of the checkouts `checkoutIds` selects (a
 * subquery, in parentheses), with `reason` (see `cancelUnheld`): a statement
 * of its own, or a CTE of a push's statement. The checkouts' ids are gathered
 * into an array first (each once), so that their recoveries are looked up by
 * id in any plan. As a subquery, a plan made once for every run (a prepared
 * statement's) made it the inner side of a join and read every pending
 * recovery of the database at each push: with a store's hour of abandoned
 * checkouts waiting (2,000), an order push took 5 ms of the database's CPU
 * instead of 0.2, and a checkout's PATCH read 1,680 buffers instead of 14-23.
 */
export function cancelPendingRecoveries<DB extends Database>(qc: QueryCreator<DB>, checkoutIds: RawBuilder<number>, reason: string | RawBuilder<string>) {
  // Any statement's CTEs, over the tables every statement has.
  return cancelUnheld(
    qc as unknown as QueryCreator<Database>,
    // The flow named in the statement, not passed: a plan made once for every run then reads the index of recoveries.
    (jobs) =>
      jobs
        .where("flow", "=", sql.lit("checkout_recovery"))
        .where("record_type", "=", sql.lit("checkout"))
        .where("record_id", "=", sql<number>`any(array(select distinct ids.id from ${checkoutIds} as ids(id)))`),
    reason,
  );
}

type JobFilter = { flow?: Flow; record_type?: RecordType; record_ids?: number[]; customer_id?: number };

/** Cancels the pending jobs that match (see `cancelUnheld`); a job already running checks again when it runs. */
export async function cancelPendingJobs(db: Executor, filter: JobFilter, reason: string): Promise<number> {
  const { flow, record_type, record_ids, customer_id } = filter;
  if (record_ids?.length === 0) return 0;
  const result = await cancelUnheld(
    db,
    (jobs) => {
      let query = jobs;
      // Named in the statement, not passed (see `cancelPendingRecoveries`).
      if (flow) query = query.where("flow", "=", sql.lit(flow));
      if (record_type) query = query.where("record_type", "=", sql.lit(record_type));
      if (record_ids) query = query.where("record_id", "in", record_ids);
      if (customer_id !== undefined) query = query.where("customer_id", "=", customer_id);
      return query;
    },
    reason,
  ).executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/**
 * The due jobs, first due first: pending ones whose time has come, and running
 * ones whose worker's lease ran out (it died mid-flow). A paused store's jobs
 * wait until it is resumed.
 *
 * The statuses are written into the statement, not passed as parameters: only
 * then can a plan made once for every run (a prepared statement's generic
 * plan) prove it may read the index of due jobs, whose rows are those of
 * these statuses, in their order, instead of scanning and sorting every job.
 *
 * Every due job's time has come, the running ones' too (a job is claimed once
 * due, and its `run_at` stays while it runs): said first, on its own, it is
 * where the read of that index stops. Within the `or`, a plan read the index to
 * its end at every claim, through every job still waiting for its time: with a
 * store's default recovery delay, an hour of abandoned checkouts.
 */
function dueJobs(db: Executor, limit: number) {
  return db
    .selectFrom("automation_jobs")
    .where("run_at", "<=", now())
    .where((eb) => eb.or([eb("status", "=", sql.lit("pending")), eb.and([eb("status", "=", sql.lit("running")), eb("locked_until", "<", now())])]))
    // A filter (`not in` a hashed list of paused stores), not a join: as an anti-join, its estimate collapses to one row
    // when every job's store is unpaused and few (one shop: the containment of the stores' statistics), and the plan then
    // sorts every due job to take the first few, at each claim.
    .where("store_id", "not in", (eb) => eb.selectFrom("stores").select("stores.id").where("stores.paused", "=", sql.lit(true)))
    .orderBy("run_at")
    .orderBy("id")
    .limit(limit);
}

/** What a claim writes: the job runs, on this worker's lease, one attempt more. */
function claimed(workerId: string, leaseSeconds: number) {
  return (eb: ExpressionBuilder<Database, "automation_jobs">) => ({
    status: "running" as const,
    attempts: eb("attempts", "+", 1),
    locked_by: workerId,
    locked_until: sql<Date>`now() + make_interval(secs => ${leaseSeconds})`,
    updated_at: now(),
  });
}

/**
 * Takes up to `limit` due jobs (see `dueJobs`) for this worker, on a lease.
 * SKIP LOCKED lets any number of workers claim side by side, never the same job.
 */
export async function claimJobs(db: Executor, workerId: string, leaseSeconds: number, limit: number): Promise<JobRow[]> {
  const due = dueJobs(db, limit).select("id").forNoKeyUpdate().skipLocked();
  return db.updateTable("automation_jobs").set(claimed(workerId, leaseSeconds)).where("id", "in", due).returningAll().execute();
}

/**
 * Takes up to `limit` due jobs (see `dueJobs`) and locks them until the
 * transaction ends, without writing them: the transaction that runs them holds
 * them, and should it not commit (its worker died), they are due again as they
 * were. SKIP LOCKED keeps every other worker off them meanwhile.
 */
export function lockDueJobs(trx: Trx, limit: number): Promise<DueJob[]> {
  return lockDueJobsStatement(trx, { limit });
}

/** `lockDueJobs`' query: what its statement runs, and what its plan is read from. */
export const dueJobsToLock = (db: Executor, limit: number) => dueJobs(db, limit).select(DUE_JOB).forNoKeyUpdate().skipLocked();

/** `lockDueJobs`' statement, built once (see `statement`). */
const lockDueJobsStatement = statement(
  (db, value: ValueOf<{ limit: number }>) => dueJobsToLock(db, value((args) => args.limit)),
);

/** What running a due job set-based reads of it (see `lockDueJobs`): not its times, key or bookkeeping. */
export const DUE_JOB = ["id", "store_id", "flow", "record_type", "record_id", "customer_id", "payload", "attempts"] as const;
export type DueJob = Pick<JobRow, (typeof DUE_JOB)[number]>;

/** Claims jobs this transaction holds (see `lockDueJobs`), as `claimJobs` does. */
export function claimHeldJobs(trx: Trx, ids: readonly number[], workerId: string, leaseSeconds: number): Promise<JobRow[]> {
  if (ids.length === 0) return Promise.resolve([]);
  return trx.updateTable("automation_jobs").set(claimed(workerId, leaseSeconds)).where("id", "=", anyId(ids)).returningAll().execute();
}

/**
 * Ends jobs this transaction holds (see `lockDueJobs`), each with its own
 * outcome, in one statement: one attempt more, run by this worker.
 */
export async function endHeldJobs(
  trx: Trx,
  jobs: ReadonlyArray<{ job: Pick<JobRow, "id">; status: "succeeded" | "cancelled"; error: string | null }>,
  workerId: string,
): Promise<void> {
  if (jobs.length === 0) return;
  await sql`
    update automation_jobs as job
    set status = outcome.status, last_error = outcome.error, attempts = job.attempts + 1, locked_by = ${workerId}::text,
      locked_until = null, updated_at = now(), finished_at = now()
    from unnest(${jobs.map(({ job }) => job.id)}::bigint[], ${jobs.map(({ status }) => status)}::text[], ${jobs.map(({ error }) => error)}::text[]) as outcome(id, status, error)
    where job.id = outcome.id`.execute(trx);
}

/** The job as this claim holds it: running, by this worker, at this attempt. */
const stillHeld =
  (job: Pick<JobRow, "id" | "attempts">, workerId: string) =>
  (eb: ExpressionBuilder<Database, "automation_jobs">) =>
    eb.and([eb("id", "=", job.id), eb("status", "=", "running"), eb("locked_by", "=", workerId), eb("attempts", "=", job.attempts)]);

/**
 * Finishes a job this claim still holds: the same worker and the same attempt
 * (a claim that outlived its lease may have been taken over, by another worker
 * or by a later claim of this one). `locked_by` stays, saying which worker ran it last.
 */
export async function finishJob(
  db: Executor,
  job: Pick<JobRow, "id" | "attempts">,
  workerId: string,
  outcome: { status: "succeeded" | "failed" | "cancelled"; error?: string } | { status: "pending"; error: string; retryInMs: number },
): Promise<boolean> {
  const result = await db
    .updateTable("automation_jobs")
    .set({
      status: outcome.status,
      last_error: outcome.error ?? null,
      locked_until: null,
      updated_at: now(),
      ...(outcome.status === "pending"
        ? { run_at: sql<Date>`now() + make_interval(secs => ${outcome.retryInMs / 1000})` }
        : { finished_at: now() }),
    })
    .where(stillHeld(job, workerId))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export type NewMessage = Pick<Selectable<MessageTable>, "store_id" | "job_id" | "flow" | "customer_id" | "contact_id" | "to_phone" | "provider"> & { content: Record<string, unknown> };

/**
 * The job's message, recorded once: a retried job finds and reuses the first
 * one, with its id and content (the no-op update returns the existing row).
 */
export async function recordMessage(db: Executor, message: NewMessage, status: "pending" | "sent") {
  return db
    .insertInto("messages")
    .values({ ...message, content: JSON.stringify(message.content), status, sent_at: status === "sent" ? now() : null })
    .onConflict((oc) => oc.column("job_id").doUpdateSet({ job_id: (eb) => eb.ref("excluded.job_id") }))
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** A message as `recordMessages` recorded it: what leaves the process of it. */
export type RecordedMessage = Pick<MessageRow, "id" | "job_id" | "store_id" | "flow" | "to_phone" | "content" | "created_at">;

/**
 * Records the messages of many jobs in one statement, each once (see
 * `recordMessage`): by job id. The content comes back only for a message that
 * was already recorded (its first content stays); a new one's is what was sent.
 */
export async function recordMessages(db: Executor, messages: readonly NewMessage[], status: "pending" | "sent"): Promise<Map<number, RecordedMessage>> {
  if (messages.length === 0) return new Map();
  const column = <T>(pick: (message: NewMessage) => T) => messages.map(pick);
  // One statement of constant text for any number of messages (each column an array).
  // `content` is null here for a message this statement recorded.
  const { rows } = await sql<RecordedMessage>`
    insert into messages (store_id, job_id, flow, customer_id, contact_id, to_phone, content, provider, status, sent_at)
    select m.store_id, m.job_id, m.flow, m.customer_id, m.contact_id, m.to_phone, m.content, m.provider, ${status}::text, case when ${status}::text = 'sent' then now() end
    from unnest(
      ${column((m) => m.store_id)}::bigint[], ${column((m) => m.job_id)}::bigint[], ${column((m) => m.flow)}::text[],
      ${column((m) => m.customer_id)}::bigint[], ${column((m) => m.contact_id)}::bigint[], ${column((m) => m.to_phone)}::text[],
      ${column((m) => JSON.stringify(m.content))}::jsonb[], ${column((m) => m.provider)}::text[]
    ) as m(store_id, job_id, flow, customer_id, contact_id, to_phone, content, provider)
    on conflict (job_id) do update set job_id = excluded.job_id
    returning id, job_id, store_id, flow, to_phone, created_at, case when xmax <> 0 then content end as content`.execute(db);
  const sent = new Map(messages.map((message) => [message.job_id, message.content]));
  return new Map(rows.map((row) => [Number(row.job_id), { ...row, content: row.content ?? sent.get(Number(row.job_id)) }]));
}

/** Marks the job's message sent and the job succeeded, in one statement; false when this worker no longer holds the job. */
export async function completeDelivery(db: Executor, job: Pick<JobRow, "id" | "attempts">, workerId: string): Promise<boolean> {
  const result = await db
    .with("sent", (qb) =>
      qb.updateTable("messages").set({ status: "sent", sent_at: now() }).where("job_id", "=", job.id).where("status", "=", "pending"),
    )
    .updateTable("automation_jobs")
    .set({ status: "succeeded", last_error: null, locked_until: null, updated_at: now(), finished_at: now() })
    .where(stillHeld(job, workerId))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function setMessageStatus(db: Executor, jobId: number, status: "sent" | "failed"): Promise<void> {
  await db
    .updateTable("messages")
    .set({ status, ...(status === "sent" ? { sent_at: now() } : {}) })
    .where("job_id", "=", jobId)
    .where("status", "=", "pending")
    .execute();
}

/**
 * After an erasure: what was sent and run stays counted, but no longer says to
 * whom or what (a phone-keyed customer's id is its phone, so it goes too).
 */
export async function redactCustomerMessages(db: Executor, customerId: number): Promise<void> {
  await db
    .updateTable("messages")
    .set({ to_phone: null, content: JSON.stringify({ redacted: true }) })
    .where("customer_id", "=", customerId)
    .execute();
  // Not the jobs a worker holds (a job is last in the lock order): their worker redacts them when it finds the erasure.
  await db
    .updateTable("automation_jobs")
    .set({ record_external_id: ERASED_ID })
    .where("id", "in", (eb) =>
      eb.selectFrom("automation_jobs").select("id").where("customer_id", "=", customerId).where("record_type", "=", "customer").forNoKeyUpdate().skipLocked(),
    )
    .execute();
}

/** What an erased customer's jobs say instead of its key (a phone-keyed customer's key is its phone). */
const ERASED_ID = "(erased)";

/** Redacts these jobs, held by this transaction, of customers it found erased (see `redactCustomerMessages`). */
export async function redactJobsOfErased(trx: Trx, jobIds: readonly number[]): Promise<void> {
  if (jobIds.length === 0) return;
  await trx.updateTable("automation_jobs").set({ record_external_id: ERASED_ID }).where("id", "=", anyId(jobIds)).where("record_type", "=", "customer").execute();
}

export type ActivityFilter = { flow?: Flow | undefined; status?: JobStatus | undefined };

/** A store's newest automation runs, of a flow or a status if asked. */
export function listRuns(db: Executor, storeId: number, limit: number, filter: ActivityFilter = {}) {
  let query = db
    .selectFrom("automation_jobs")
    .select(["id", "flow", "record_type", "record_external_id", "status", "attempts", "last_error as error", "run_at", "created_at", "finished_at"])
    .where("store_id", "=", storeId);
  if (filter.flow) query = query.where("flow", "=", filter.flow);
  if (filter.status) query = query.where("status", "=", filter.status);
  return query.orderBy("created_at", "desc").orderBy("id", "desc").limit(limit).execute();
}

/** A store's newest messages, of a flow if asked (by their run, as the runs are listed). */
export function listMessages(db: Executor, storeId: number, limit: number, filter: ActivityFilter = {}) {
  const query = db
    .selectFrom("messages")
    .select(["id", "job_id as run_id", "flow", "status", "to_phone", "content", "provider", "created_at", "sent_at"])
    .where("store_id", "=", storeId);
  return (filter.flow ? query.where("flow", "=", filter.flow) : query).orderBy("created_at", "desc").orderBy("job_id", "desc").limit(limit).execute();
}
