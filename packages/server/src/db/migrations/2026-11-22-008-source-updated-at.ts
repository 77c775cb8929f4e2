import type { Kysely } from "kysely";

// Frozen in time: never import application code here.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // When the shop last changed each record, as it says: a write older than this is not applied.
  for (const table of ["customers", "orders", "checkouts", "shipments"]) {
    await db.schema.alterTable(table).addColumn("source_updated_at", "timestamptz").execute();
  }
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ["customers", "orders", "checkouts", "shipments"]) {
    await db.schema.alterTable(table).dropColumn("source_updated_at").execute();
  }
}
