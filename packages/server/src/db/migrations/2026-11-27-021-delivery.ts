import { sql, type Kysely } from "kysely";

// Frozen in time: never import application code here.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // A store's own messaging endpoint. Its signing secret is kept to sign with (never shown again after it is made);
  // a rolled secret stays valid beside the new one until `previous_until`, so receivers can switch without a gap.
  await sql`
    create table webhook_endpoints (
      store_id bigint primary key references stores (id) on delete cascade,
      url text not null,
      secret text not null,
      previous_secret text,
      previous_until timestamptz,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    )`.execute(db);
  // Each time a message (or a test event) was handed to an endpoint, and what it answered.
  await sql`
    create table delivery_attempts (
      id bigserial primary key,
      store_id bigint not null references stores (id) on delete cascade,
      message_id uuid references messages (id) on delete cascade,
      url text not null,
      attempted_at timestamptz not null default now(),
      duration_ms integer not null,
      status integer,
      answer text,
      error text
    )`.execute(db);
  await sql`create index delivery_attempts_store_idx on delivery_attempts (store_id, attempted_at desc, id desc)`.execute(db);
  await sql`create index delivery_attempts_message_idx on delivery_attempts (message_id, attempted_at) where message_id is not null`.execute(db);
  // The console's messages, by status within a store.
  await sql`create index messages_store_status_idx on messages (store_id, status, created_at)`.execute(db);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index messages_store_status_idx`.execute(db);
  await sql`drop table delivery_attempts`.execute(db);
  await sql`drop table webhook_endpoints`.execute(db);
}
