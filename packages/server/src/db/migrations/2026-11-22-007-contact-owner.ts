import { sql, type Kysely } from "kysely";

// Frozen in time: never import application code here.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // Whose profile a contact shows, so an erasure clears its own profile and no other customer's.
  await db.schema
    .alterTable("contacts")
    .addColumn("synced_customer_id", "bigint", (col) => col.references("customers.id").onDelete("set null"))
    .execute();
  // Contacts of phones customers dropped before every link was remembered: nobody's now, and
  // possibly holding an old synced profile. Messages keep their rows (their contact becomes null).
  await sql`
    delete from contacts c
    where not exists (select 1 from customers cu where cu.contact_id = c.id)
      and not exists (select 1 from customer_contacts cc where cc.contact_id = c.id)`.execute(db);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("contacts").dropColumn("synced_customer_id").execute();
}
