import { openDatabase } from "../db/index.js";
import { migrateToLatest } from "../db/migrate.js";
import { loadEnv } from "../env.js";
import { createLogger } from "../logger.js";

/** `pnpm migrate`: brings the configured database up to date and exits. */
const env = loadEnv();
const logger = createLogger(env.logLevel, env.logFormat);
const database = await openDatabase(
  env.databaseUrl ? { kind: "postgres", url: env.databaseUrl, timeouts: env.databaseTimeouts } : { kind: "embedded", dataDir: env.dataDir },
);
try {
  const applied = await database.withoutTimeouts(migrateToLatest);
  logger.info({ database: database.kind, applied }, applied.length ? "migrated" : "already up to date");
} catch (error) {
  logger.fatal({ err: error }, "migration failed");
  process.exitCode = 1;
} finally {
  await database.close();
}
