import { sql, type Kysely } from "kysely";

// Frozen in time: never import application code here.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // Where and with what a session was opened (its account lists them), and each audited act's address and user agent.
  await sql`alter table sessions add column address text, add column user_agent text`.execute(db);
  await sql`alter table audit_log add column address text, add column user_agent text`.execute(db);
  await sql`create index audit_log_team_action_idx on audit_log (team_id, action, id)`.execute(db);
  // Roles: an owner runs the team (members, its settings); a member runs stores, keys, imports and delivery. Every
  // member there was could do everything: each stays an owner, so nobody loses what they could do.
  await sql`alter table members add column role text not null default 'member' check (role in ('owner', 'member'))`.execute(db);
  await sql`update members set role = 'owner'`.execute(db);
  // A password reset link: its token's hash, good once, for an hour.
  await sql`
    create table password_resets (
      id bigserial primary key,
      account_id bigint not null references accounts (id) on delete cascade,
      token_hash text not null unique,
      created_at timestamptz not null default now(),
      expires_at timestamptz not null,
      used_at timestamptz
    )`.execute(db);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table password_resets`.execute(db);
  await sql`alter table members drop column role`.execute(db);
  await sql`drop index audit_log_team_action_idx`.execute(db);
  await sql`alter table audit_log drop column address, drop column user_agent`.execute(db);
  await sql`alter table sessions drop column address, drop column user_agent`.execute(db);
}
