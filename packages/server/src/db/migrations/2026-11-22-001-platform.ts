import { sql, type Kysely } from "kysely";

// Frozen in time: never import application code here.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("teams")
    .addColumn("id", "bigint", (col) => col.primaryKey().generatedByDefaultAsIdentity())
    .addColumn("name", "text", (col) => col.notNull())
    .addColumn("created_at", "timestamptz", (col) => col.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema
    .createTable("stores")
    .addColumn("id", "bigint", (col) => col.primaryKey().generatedByDefaultAsIdentity())
    .addColumn("team_id", "bigint", (col) => col.notNull().references("teams.id"))
    .addColumn("name", "text", (col) => col.notNull())
    .addColumn("country", "text")
    .addColumn("recovery_delay_seconds", "integer", (col) => col.notNull().defaultTo(3600).check(sql`recovery_delay_seconds >= 0`))
    .addColumn("paused", "boolean", (col) => col.notNull().defaultTo(false))
    .addColumn("created_at", "timestamptz", (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn("updated_at", "timestamptz", (col) => col.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex("stores_team_id_idx").on("stores").column("team_id").execute();

  await db.schema
    .createTable("api_keys")
    .addColumn("id", "bigint", (col) => col.primaryKey().generatedByDefaultAsIdentity())
    .addColumn("team_id", "bigint", (col) => col.notNull().references("teams.id"))
    .addColumn("store_id", "bigint", (col) => col.references("stores.id"))
    .addColumn("name", "text", (col) => col.notNull())
    .addColumn("key_hash", "text", (col) => col.notNull().unique())
    .addColumn("last4", "text", (col) => col.notNull())
    .addColumn("created_at", "timestamptz", (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn("deleted_at", "timestamptz")
    .execute();
  await db.schema.createIndex("api_keys_team_id_idx").on("api_keys").column("team_id").execute();

  await db.schema
    .createTable("contacts")
    .addColumn("id", "bigint", (col) => col.primaryKey().generatedByDefaultAsIdentity())
    .addColumn("store_id", "bigint", (col) => col.notNull().references("stores.id"))
    .addColumn("phone", "text", (col) => col.notNull())
    .addColumn("created_at", "timestamptz", (col) => col.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint("contacts_store_phone_key", ["store_id", "phone"])
    .execute();

  await db.schema
    .createTable("customers")
    .addColumn("id", "bigint", (col) => col.primaryKey().generatedByDefaultAsIdentity())
    .addColumn("store_id", "bigint", (col) => col.notNull().references("stores.id"))
    .addColumn("external_id", "text")
    .addColumn("keyed_by_phone", "boolean", (col) => col.notNull().defaultTo(false))
    .addColumn("phone", "text")
    .addColumn("first_name", "text")
    .addColumn("last_name", "text")
    .addColumn("email", "text")
    .addColumn("locale", "text")
    .addColumn("tags", sql`text[]`, (col) => col.notNull().defaultTo(sql`'{}'::text[]`))
    .addColumn("lifetime_value", "bigint", (col) => col.notNull().defaultTo(0))
    .addColumn("orders_count", "bigint", (col) => col.notNull().defaultTo(0))
    .addColumn("contact_id", "bigint", (col) => col.references("contacts.id"))
    .addColumn("created_at", "timestamptz", (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn("updated_at", "timestamptz", (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn("deleted_at", "timestamptz")
    .execute();
  // One active customer per key; erased customers step aside so the key can be created anew.
  await sql`create unique index customers_store_external_id_active_key on customers (store_id, external_id) where deleted_at is null`.execute(db);
  await db.schema.createIndex("customers_contact_id_idx").on("customers").column("contact_id").execute();

  // The shape the rate limiter's PostgreSQL store expects.
  await db.schema
    .createTable("rate_limits")
    .addColumn("key", "varchar(255)", (col) => col.primaryKey())
    .addColumn("points", "integer", (col) => col.notNull().defaultTo(0))
    .addColumn("expire", "bigint")
    .execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ["rate_limits", "customers", "contacts", "api_keys", "stores", "teams"]) {
    await db.schema.dropTable(table).execute();
  }
}
