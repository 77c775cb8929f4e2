import { sql, type Kysely } from "kysely";

// Frozen in time: never import application code here.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // A shipment written in one statement links to its order by the order's
  // external id: no such order fails the statement, so nothing of it stays.
  await sql`
    create function order_or_fail(order_id bigint) returns bigint language plpgsql as $$
    begin
      if order_id is null then
        raise exception 'order not found' using errcode = 'P0S02';
      end if;
      return order_id;
    end $$`.execute(db);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop function order_or_fail(bigint)`.execute(db);
}
