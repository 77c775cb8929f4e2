import { sql, type Kysely } from "kysely";

// Frozen in time: never import application code here.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // A push written in one statement (its customer, its record and their
  // automations) must leave nothing when its record turns out older than the
  // stored one: this fails the statement, so all of it is undone.
  await sql`
    create function fresh_or_fail(fresh boolean) returns boolean language plpgsql as $$
    begin
      if not fresh then
        raise exception 'stale write' using errcode = 'P0S01';
      end if;
      return true;
    end $$`.execute(db);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop function fresh_or_fail(boolean)`.execute(db);
}
