import { providerFromEnv, startWorker } from "../automations/index.js";
import { startImportRunner } from "../imports/runner.js";
import { openDatabase } from "../db/index.js";
import { migrateToLatest } from "../db/migrate.js";
import { configureRetries } from "../db/sql.js";
import { loadEnv } from "../env.js";
import { createLogger } from "../logger.js";
import { tuneHeap } from "./heap.js";

/**
 * `pnpm worker`: runs automations in a process of its own, beside servers
 * started with RUN_WORKER=false. Any number of these can share one PostgreSQL.
 */
const env = loadEnv();
tuneHeap(env.databaseUrl ? "postgres" : "embedded");
const logger = createLogger(env.logLevel, env.logFormat);
if (!env.databaseUrl) {
  logger.warn("no DATABASE_URL: this worker opens the embedded database, which no server can share with it");
}
configureRetries({ timeoutBudgetMs: env.requestDeadlineMs });
const database = await openDatabase(
  env.databaseUrl ? { kind: "postgres", url: env.databaseUrl, poolSize: env.worker.concurrency + env.imports.runner.concurrency + 2, timeouts: env.databaseTimeouts } : { kind: "embedded", dataDir: env.dataDir },
);
try {
  await database.withoutTimeouts(migrateToLatest);
} catch (error) {
  logger.fatal({ err: error }, "could not start");
  await database.close();
  process.exit(1);
}
const worker = startWorker({ db: database.db, logger, provider: providerFromEnv(env), endpoints: env.endpoints }, env.worker);
const imports = env.imports.runner.concurrency > 0 ? startImportRunner({ db: database.db, logger, sideBySide: database.kind === "postgres" }, env.imports.runner) : undefined;
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.once(signal, () => {
    logger.info({ signal }, "shutting down");
    void Promise.all([worker.stop(), imports?.stop()])
      .then(() => database.close())
      .then(() => process.exit(0));
  });
}
