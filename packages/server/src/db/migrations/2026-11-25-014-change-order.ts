import { sql, type Kysely } from "kysely";

const TABLES = ["orders", "customers", "checkouts", "shipments"] as const;

// Frozen in time: never import application code here.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // A store's records in the order they last changed, then by id: what a list pages through, a page at a time.
  for (const table of TABLES) await sql`create index ${sql.id(`${table}_changes_idx`)} on ${sql.table(table)} (store_id, updated_at, id)`.execute(db);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  for (const table of TABLES) await sql`drop index ${sql.id(`${table}_changes_idx`)}`.execute(db);
}
