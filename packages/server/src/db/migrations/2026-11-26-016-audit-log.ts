import { sql, type Kysely } from "kysely";

// Frozen in time: never import application code here.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // Who changed what of a team's access and stores: a member (by e-mail, kept if the member leaves) or the operator.
  await sql`
    create table audit_log (
      id bigserial primary key,
      team_id bigint not null references teams (id) on delete cascade,
      actor text not null,
      action text not null,
      target text not null,
      created_at timestamptz not null default now()
    )`.execute(db);
  await sql`create index audit_log_team_idx on audit_log (team_id, id desc)`.execute(db);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table audit_log`.execute(db);
}
