import { loadEnv } from "../env.js";
import { createLogger } from "../logger.js";
import { startServer } from "../server.js";

const env = loadEnv();
const logger = createLogger(env.logLevel);

try {
  const server = await startServer(env, logger);
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    process.once(signal, () => {
      logger.info({ signal }, "shutting down");
      // However the database behaves (a frozen one never answers), the process is gone in time.
      setTimeout(() => {
        logger.error({ shutdownTimeoutMs: env.shutdownTimeoutMs }, "shutdown did not finish in time; exiting");
        process.exit(1);
      }, env.shutdownTimeoutMs).unref();
      server.close().then(
        () => process.exit(0),
        (error: unknown) => {
          logger.error({ err: error }, "shutdown failed");
          process.exit(1);
        },
      );
    });
  }
} catch (error) {
  logger.fatal({ err: error }, "could not start");
  process.exit(1);
}
