import { sql, type Kysely } from "kysely";

// Frozen in time: never import application code here.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // A password chosen on an invitation waits here until its e-mail is proven by the link mailed to it.
  await sql`alter table invitations add column pending_password_hash text, add column verify_token_hash text unique, add column verify_expires_at timestamptz`.execute(db);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table invitations drop column pending_password_hash, drop column verify_token_hash, drop column verify_expires_at`.execute(db);
}
