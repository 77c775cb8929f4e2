import { sql, type Kysely } from "kysely";

// Frozen in time: never import application code here.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // Jobs are found by their record only to cancel checkout recoveries: an index of those
  // alone, rather than of every job by its record, which each job's insert and end had to write.
  await sql`create index automation_jobs_recovery_idx on automation_jobs (record_id) where flow = 'checkout_recovery' and record_type = 'checkout'`.execute(db);
  await sql`drop index automation_jobs_record_idx`.execute(db);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex("automation_jobs_record_idx").on("automation_jobs").columns(["record_type", "record_id"]).execute();
  await sql`drop index automation_jobs_recovery_idx`.execute(db);
}
