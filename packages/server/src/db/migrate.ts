import { Migrator } from "kysely/migration";
import type { Db } from "./types.js";
import { migrations } from "./migrations/index.js";

/** Brings the schema up to date; safe to run from several processes at once (the migrator locks). */
export async function migrateToLatest(db: Db): Promise<string[]> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: () => Promise.resolve(migrations) },
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error("migration failed", { cause: error });
  return (results ?? []).filter((result) => result.status === "Success").map((result) => result.migrationName);
}
