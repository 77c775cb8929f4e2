import { sql, type Kysely } from "kysely";

// Frozen in time: never import application code here.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // An account's TOTP: its secret once confirmed (and the last time step used, so a code works once), a secret
  // being set up, and its recovery codes (hashed, each good once).
  await sql`alter table accounts add column totp_secret text, add column totp_enabled_at timestamptz, add column totp_pending_secret text, add column totp_last_step bigint`.execute(db);
  await sql`
    create table recovery_codes (
      id bigserial primary key,
      account_id bigint not null references accounts (id) on delete cascade,
      code_hash text not null,
      used_at timestamptz
    )`.execute(db);
  await sql`create index recovery_codes_account_idx on recovery_codes (account_id)`.execute(db);
  // A team that requires two-factor sign-in of its members.
  await sql`alter table teams add column require_two_factor boolean not null default false`.execute(db);
  // A sign-in whose password was right, waiting for its second factor (a code, or its setup): five minutes, five tries.
  await sql`
    create table sign_in_challenges (
      id bigserial primary key,
      account_id bigint not null references accounts (id) on delete cascade,
      member_id bigint not null references members (id) on delete cascade,
      token_hash text not null unique,
      need text not null check (need in ('code', 'setup')),
      attempts integer not null default 0,
      expires_at timestamptz not null,
      used_at timestamptz
    )`.execute(db);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table sign_in_challenges`.execute(db);
  await sql`alter table teams drop column require_two_factor`.execute(db);
  await sql`drop table recovery_codes`.execute(db);
  await sql`alter table accounts drop column totp_secret, drop column totp_enabled_at, drop column totp_pending_secret, drop column totp_last_step`.execute(db);
}
