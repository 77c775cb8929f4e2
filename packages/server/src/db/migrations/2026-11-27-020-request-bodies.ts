import { sql, type Kysely } from "kysely";

// Frozen in time: never import application code here.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // A call as an integrator debugs it: the path it was sent to, its error code, and its bodies (masked, capped).
  await sql`alter table request_log add column path text, add column code text, add column request_body text, add column response_body text`.execute(db);
  // A store whose calls' bodies must not be kept (refusals keep theirs).
  await sql`alter table stores add column log_bodies boolean not null default true`.execute(db);
  // Filters by route and by error code within a store's recent calls.
  await sql`create index request_log_store_code_idx on request_log (store_id, code, created_at) where code is not null`.execute(db);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index request_log_store_code_idx`.execute(db);
  await sql`alter table stores drop column log_bodies`.execute(db);
  await sql`alter table request_log drop column path, drop column code, drop column request_body, drop column response_body`.execute(db);
}
