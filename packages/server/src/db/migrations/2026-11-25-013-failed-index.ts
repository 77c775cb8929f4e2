import { sql, type Kysely } from "kysely";

// Frozen in time: never import application code here.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // The jobs that ended failed, by when: what /metrics counts for the last hour at each scrape, which
  // otherwise read every job ever written. Failures are few, so the index is small and rarely written.
  await sql`create index automation_jobs_failed_idx on automation_jobs (finished_at) where status = 'failed'`.execute(db);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index automation_jobs_failed_idx`.execute(db);
}
