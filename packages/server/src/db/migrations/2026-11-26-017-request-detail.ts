import { sql, type Kysely } from "kysely";

// Frozen in time: never import application code here.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // What a call wrote (its kind and key, never its body) and, when refused, the fields named: the console's live view opens each call to them.
  await sql`alter table request_log add column record_kind text, add column record_external_id text, add column details jsonb`.execute(db);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table request_log drop column record_kind, drop column record_external_id, drop column details`.execute(db);
}
