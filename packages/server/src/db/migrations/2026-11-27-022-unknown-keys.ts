import { sql, type Kysely } from "kysely";

// Frozen in time: never import application code here.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // Calls to a store's paths with a key no team has: counted by the key's first characters, never the key itself.
  await sql`
    create table unknown_key_calls (
      store_id bigint not null references stores (id) on delete cascade,
      key_prefix text not null,
      calls integer not null,
      first_at timestamptz not null default now(),
      last_at timestamptz not null default now(),
      primary key (store_id, key_prefix)
    )`.execute(db);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table unknown_key_calls`.execute(db);
}
