import { sql, type Kysely } from "kysely";

// Frozen in time: never import application code here.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // The first response to each (store, Idempotency-Key), replayed for 24 hours. A null status
  // means the first request is still running.
  await db.schema
    .createTable("idempotency_keys")
    .addColumn("store_id", "bigint", (col) => col.notNull().references("stores.id"))
    .addColumn("key", "text", (col) => col.notNull())
    .addColumn("fingerprint", "text", (col) => col.notNull())
    .addColumn("request_id", "text", (col) => col.notNull())
    .addColumn("status", "integer")
    .addColumn("body", "text")
    .addColumn("created_at", "timestamptz", (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn("expires_at", "timestamptz", (col) => col.notNull())
    .addPrimaryKeyConstraint("idempotency_keys_pkey", ["store_id", "key"])
    .execute();
  await db.schema.createIndex("idempotency_keys_expires_idx").on("idempotency_keys").column("expires_at").execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("idempotency_keys").execute();
}
