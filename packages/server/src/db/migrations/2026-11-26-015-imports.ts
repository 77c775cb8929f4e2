import { sql, type Kysely } from "kysely";

// Frozen in time: never import application code here.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // An import: a file of records received whole, then merged a chunk at a time by any server or worker.
  await sql`
    create table imports (
      id bigserial primary key,
      store_id bigint not null references stores (id) on delete cascade,
      team_id bigint not null references teams (id) on delete cascade,
      key_id bigint references api_keys (id) on delete set null,
      kind text not null check (kind in ('orders', 'customers', 'checkouts', 'shipments')),
      status text not null default 'receiving' check (status in ('receiving', 'queued', 'running', 'succeeded', 'failed', 'cancelled')),
      bytes bigint not null default 0,
      lines integer not null default 0,
      chunks integer not null default 0,
      merged_chunks integer not null default 0,
      created integer not null default 0,
      updated integer not null default 0,
      failed integer not null default 0,
      error text,
      created_at timestamptz not null default now(),
      received_at timestamptz,
      started_at timestamptz,
      finished_at timestamptz,
      updated_at timestamptz not null default now()
    )`.execute(db);
  await sql`create index imports_store_idx on imports (store_id, id desc)`.execute(db);
  await sql`create index imports_waiting_idx on imports (id) where status in ('queued', 'running')`.execute(db);
  // The file, a chunk of lines per row (deflated), until the chunk is merged; the lease says which process holds it.
  await sql`
    create table import_chunks (
      import_id bigint not null references imports (id) on delete cascade,
      seq integer not null,
      first_line integer not null,
      lines integer not null,
      body bytea not null,
      claimed_by text,
      claimed_until timestamptz,
      attempts integer not null default 0,
      primary key (import_id, seq)
    )`.execute(db);
  // Already deflated: PostgreSQL need not try again.
  await sql`alter table import_chunks alter column body set storage external`.execute(db);
  await sql`
    create table import_errors (
      import_id bigint not null references imports (id) on delete cascade,
      line integer not null,
      external_id text,
      status integer not null,
      code text not null,
      error text not null,
      details jsonb,
      primary key (import_id, line)
    )`.execute(db);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table import_errors`.execute(db);
  await sql`drop table import_chunks`.execute(db);
  await sql`drop table imports`.execute(db);
}
