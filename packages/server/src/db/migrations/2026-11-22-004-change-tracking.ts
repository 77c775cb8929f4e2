import { sql, type Kysely } from "kysely";

// Frozen in time: never import application code here.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // What the latest write of a record changed, decided under the row's lock by the write itself:
  // PostgreSQL 15 cannot return a row's previous values from an upsert, and a trigger must fire
  // only for what its own write changed (a backfilled record touched again fires nothing).
  await db.schema.alterTable("customers").addColumn("profile_changed", "boolean", (col) => col.notNull().defaultTo(true)).execute();
  await db.schema.alterTable("checkouts").addColumn("entered_abandoned", "boolean", (col) => col.notNull().defaultTo(true)).execute();
  await db.schema.alterTable("shipments").addColumn("status_changed", "boolean", (col) => col.notNull().defaultTo(true)).execute();

  // Every contact a customer has been linked to, so an erasure reaches the contacts of its earlier phones.
  await db.schema
    .createTable("customer_contacts")
    .addColumn("customer_id", "bigint", (col) => col.notNull().references("customers.id").onDelete("cascade"))
    .addColumn("contact_id", "bigint", (col) => col.notNull().references("contacts.id").onDelete("cascade"))
    .addPrimaryKeyConstraint("customer_contacts_pkey", ["customer_id", "contact_id"])
    .execute();
  await db.schema.createIndex("customer_contacts_contact_id_idx").on("customer_contacts").column("contact_id").execute();
  await sql`insert into customer_contacts (customer_id, contact_id) select id, contact_id from customers where contact_id is not null`.execute(db);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("customer_contacts").execute();
  await db.schema.alterTable("shipments").dropColumn("status_changed").execute();
  await db.schema.alterTable("checkouts").dropColumn("entered_abandoned").execute();
  await db.schema.alterTable("customers").dropColumn("profile_changed").execute();
}
