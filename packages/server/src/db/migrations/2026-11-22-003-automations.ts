import { sql, type Kysely } from "kysely";

// Frozen in time: never import application code here.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // Bumped whenever a synced field changes, so "once per change" is a unique key.
  await db.schema.alterTable("customers").addColumn("profile_version", "integer", (col) => col.notNull().defaultTo(1)).execute();
  // Counts entries into `abandoned`, so "once per abandonment" is a unique key.
  await db.schema.alterTable("checkouts").addColumn("abandonment_count", "integer", (col) => col.notNull().defaultTo(1)).execute();

  // What the messaging app knows of a contact, as the contact-sync flow last set it.
  await db.schema
    .alterTable("contacts")
    .addColumn("first_name", "text")
    .addColumn("last_name", "text")
    .addColumn("email", "text")
    .addColumn("locale", "text")
    .addColumn("tags", sql`text[]`, (col) => col.notNull().defaultTo(sql`'{}'::text[]`))
    .addColumn("lifetime_value", "bigint", (col) => col.notNull().defaultTo(0))
    .addColumn("orders_count", "bigint", (col) => col.notNull().defaultTo(0))
    .addColumn("synced_at", "timestamptz")
    .execute();

  await db.schema
    .createTable("automation_jobs")
    .addColumn("id", "bigint", (col) => col.primaryKey().generatedByDefaultAsIdentity())
    .addColumn("store_id", "bigint", (col) => col.notNull().references("stores.id"))
    .addColumn("flow", "text", (col) => col.notNull())
    .addColumn("dedupe_key", "text", (col) => col.notNull().unique())
    .addColumn("record_type", "text", (col) => col.notNull())
    .addColumn("record_id", "bigint", (col) => col.notNull())
    .addColumn("record_external_id", "text", (col) => col.notNull())
    .addColumn("customer_id", "bigint", (col) => col.references("customers.id"))
    .addColumn("payload", "jsonb", (col) => col.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn("status", "text", (col) =>
      col.notNull().defaultTo("pending").check(sql`status in ('pending', 'running', 'succeeded', 'failed', 'cancelled')`),
    )
    .addColumn("run_at", "timestamptz", (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn("attempts", "integer", (col) => col.notNull().defaultTo(0))
    .addColumn("last_error", "text")
    .addColumn("locked_by", "text")
    .addColumn("locked_until", "timestamptz")
    .addColumn("created_at", "timestamptz", (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn("updated_at", "timestamptz", (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn("finished_at", "timestamptz")
    .execute();
  await sql`create index automation_jobs_due_idx on automation_jobs (run_at, id) where status in ('pending', 'running')`.execute(db);
  await db.schema.createIndex("automation_jobs_store_idx").on("automation_jobs").columns(["store_id", "created_at"]).execute();
  await db.schema.createIndex("automation_jobs_record_idx").on("automation_jobs").columns(["record_type", "record_id"]).execute();
  await db.schema.createIndex("automation_jobs_customer_idx").on("automation_jobs").column("customer_id").execute();

  await db.schema
    .createTable("messages")
    .addColumn("id", "uuid", (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn("store_id", "bigint", (col) => col.notNull().references("stores.id"))
    .addColumn("job_id", "bigint", (col) => col.notNull().unique().references("automation_jobs.id"))
    .addColumn("flow", "text", (col) => col.notNull())
    .addColumn("customer_id", "bigint", (col) => col.references("customers.id"))
    .addColumn("contact_id", "bigint", (col) => col.references("contacts.id").onDelete("set null"))
    .addColumn("to_phone", "text")
    .addColumn("content", "jsonb", (col) => col.notNull())
    .addColumn("provider", "text", (col) => col.notNull())
    .addColumn("status", "text", (col) => col.notNull().defaultTo("pending").check(sql`status in ('pending', 'sent', 'failed')`))
    .addColumn("created_at", "timestamptz", (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn("sent_at", "timestamptz")
    .execute();
  await db.schema.createIndex("messages_store_idx").on("messages").columns(["store_id", "created_at"]).execute();
  await db.schema.createIndex("messages_customer_idx").on("messages").column("customer_id").execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("messages").execute();
  await db.schema.dropTable("automation_jobs").execute();
  await db.schema
    .alterTable("contacts")
    .dropColumn("first_name")
    .dropColumn("last_name")
    .dropColumn("email")
    .dropColumn("locale")
    .dropColumn("tags")
    .dropColumn("lifetime_value")
    .dropColumn("orders_count")
    .dropColumn("synced_at")
    .execute();
  await db.schema.alterTable("checkouts").dropColumn("abandonment_count").execute();
  await db.schema.alterTable("customers").dropColumn("profile_version").execute();
}
