import { sql, type Kysely } from "kysely";

// Frozen in time: never import application code here.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // Why an import failed, as a stable code (its upload interrupted, too slow, too large, unreadable; or its merge).
  await sql`alter table imports add column error_code text`.execute(db);
  // An upload still arriving whose heartbeat stopped (its server died) is found by this, and failed.
  await sql`create index imports_receiving_idx on imports (updated_at) where status = 'receiving'`.execute(db);
  // Blank lines are never stored: where runs of them were left out of a chunk, pairs of
  // (index of the stored line they came before, how many), so every line keeps its number.
  await sql`alter table import_chunks add column gaps integer[]`.execute(db);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table import_chunks drop column gaps`.execute(db);
  await sql`drop index imports_receiving_idx`.execute(db);
  await sql`alter table imports drop column error_code`.execute(db);
}
