import { sql, type Kysely } from "kysely";

// Frozen in time: never import application code here.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // Every process caches who may push to which store; any change to what that
  // answer reads (a store created, paused, moved or removed; a key deleted or
  // restricted) tells them all at commit, whoever made it.
  await sql`
    create function notify_access_changed() returns trigger language plpgsql as $$
    begin
      perform pg_notify('access_changed', '');
      return null;
    end $$`.execute(db);
  await sql`create trigger stores_access_changed after insert or update or delete on stores for each statement execute function notify_access_changed()`.execute(db);
  await sql`create trigger api_keys_access_changed after update of deleted_at, store_id, team_id, key_hash or delete on api_keys for each statement execute function notify_access_changed()`.execute(db);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger api_keys_access_changed on api_keys`.execute(db);
  await sql`drop trigger stores_access_changed on stores`.execute(db);
  await sql`drop function notify_access_changed()`.execute(db);
}
