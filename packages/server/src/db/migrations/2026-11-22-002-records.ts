import { sql, type Kysely } from "kysely";

// Frozen in time: never import application code here.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("orders")
    .addColumn("id", "bigint", (col) => col.primaryKey().generatedByDefaultAsIdentity())
    .addColumn("store_id", "bigint", (col) => col.notNull().references("stores.id"))
    .addColumn("external_id", "text", (col) => col.notNull())
    .addColumn("customer_id", "bigint", (col) => col.notNull().references("customers.id"))
    .addColumn("placed_at", "timestamptz", (col) => col.notNull())
    .addColumn("total_price", "numeric(14, 2)", (col) => col.notNull().check(sql`total_price >= 0`))
    .addColumn("currency", "text")
    .addColumn("financial_status", "text")
    .addColumn("fulfillment_status", "text")
    .addColumn("line_items", "jsonb")
    .addColumn("tags", sql`text[]`, (col) => col.notNull().defaultTo(sql`'{}'::text[]`))
    .addColumn("metadata", "jsonb")
    .addColumn("created_at", "timestamptz", (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn("updated_at", "timestamptz", (col) => col.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint("orders_store_external_id_key", ["store_id", "external_id"])
    .execute();
  await db.schema.createIndex("orders_customer_id_idx").on("orders").columns(["customer_id", "placed_at"]).execute();

  await db.schema
    .createTable("checkouts")
    .addColumn("id", "bigint", (col) => col.primaryKey().generatedByDefaultAsIdentity())
    .addColumn("store_id", "bigint", (col) => col.notNull().references("stores.id"))
    .addColumn("external_id", "text", (col) => col.notNull())
    .addColumn("customer_id", "bigint", (col) => col.notNull().references("customers.id"))
    .addColumn("status", "text", (col) =>
      col.notNull().check(sql`status in ('active', 'abandoned', 'recovered', 'completed', 'expired')`),
    )
    .addColumn("abandoned_at", "timestamptz", (col) => col.notNull())
    .addColumn("total_price", "numeric(14, 2)", (col) => col.notNull().check(sql`total_price >= 0`))
    .addColumn("currency", "text")
    .addColumn("recovery_url", "text")
    .addColumn("line_items", "jsonb")
    .addColumn("tags", sql`text[]`, (col) => col.notNull().defaultTo(sql`'{}'::text[]`))
    .addColumn("metadata", "jsonb")
    .addColumn("created_at", "timestamptz", (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn("updated_at", "timestamptz", (col) => col.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint("checkouts_store_external_id_key", ["store_id", "external_id"])
    .execute();
  await db.schema.createIndex("checkouts_customer_id_idx").on("checkouts").column("customer_id").execute();

  await db.schema
    .createTable("shipments")
    .addColumn("id", "bigint", (col) => col.primaryKey().generatedByDefaultAsIdentity())
    .addColumn("store_id", "bigint", (col) => col.notNull().references("stores.id"))
    .addColumn("external_id", "text", (col) => col.notNull())
    .addColumn("order_id", "bigint", (col) => col.notNull().references("orders.id"))
    .addColumn("tracking_number", "text")
    .addColumn("tracking_url", "text")
    .addColumn("carrier", "text")
    .addColumn("status", "text", (col) => col.check(sql`status in ('pending', 'in_transit', 'delivered', 'failed', 'returned')`))
    .addColumn("metadata", "jsonb")
    .addColumn("created_at", "timestamptz", (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn("updated_at", "timestamptz", (col) => col.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint("shipments_store_external_id_key", ["store_id", "external_id"])
    .execute();
  await db.schema.createIndex("shipments_order_id_idx").on("shipments").column("order_id").execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ["shipments", "checkouts", "orders"]) {
    await db.schema.dropTable(table).execute();
  }
}
