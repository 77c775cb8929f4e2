import { promises as fs } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { FileMigrationProvider, Migrator } from "kysely/migration";
import type { Db } from "./types.js";

/**
 * The migrations: every file of the `migrations` folder, in the order of their
 * names. The folder stands beside this module in the source and beside the
 * built chunk that holds it in `dist` (the build writes each migration to
 * `dist/migrations`), so a new migration is one new file.
 */
const MIGRATIONS = fileURLToPath(new URL("./migrations/", import.meta.url));

/** Brings the schema up to date; safe to run from several processes at once (the migrator locks). */
export async function migrateToLatest(db: Db): Promise<string[]> {
  const migrator = new Migrator({
    db,
    provider: new FileMigrationProvider({ fs, path, migrationFolder: MIGRATIONS, import: (file) => import(pathToFileURL(file).href) }),
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error("migration failed", { cause: error });
  return (results ?? []).filter((result) => result.status === "Success").map((result) => result.migrationName);
}
