import cluster, { type Worker as ClusterWorker } from "node:cluster";
import { loadEnv, type Env } from "../env.js";
import { createLogger, type Logger } from "../logger.js";
import { startServer } from "../server.js";
import { tuneHeap } from "./heap.js";

const env = loadEnv();
tuneHeap(env.databaseUrl ? "postgres" : "embedded");
const logger = createLogger(env.logLevel, env.logFormat);

/** Exits within the shutdown budget whatever happens (a frozen database never answers). */
function exitInTime(): void {
  setTimeout(() => {
    logger.error({ shutdownTimeoutMs: env.shutdownTimeoutMs }, "shutdown did not finish in time; exiting");
    process.exit(1);
  }, env.shutdownTimeoutMs).unref();
}

/**
 * CLUSTER_WORKERS > 1: this process only supervises. It starts that many server
 * processes, which share the port (each with its own pool, and its own
 * automation worker unless RUN_WORKER=false: jobs are claimed with SKIP LOCKED,
 * key caches are kept coherent by the database's notifications). One that dies
 * is replaced; SIGTERM or SIGINT is passed on, and this process exits once they
 * have.
 */
function supervise(settings: Env, log: Logger): void {
  let stopping = false;
  const fork = (): ClusterWorker => cluster.fork();
  cluster.on("exit", (worker, code, signal) => {
    if (stopping) {
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(0);
      return;
    }
    log.error({ pid: worker.process.pid, code, signal }, "server process died; starting another");
    setTimeout(fork, 500);
  });
  for (let i = 0; i < settings.clusterWorkers; i++) fork();
  log.info({ processes: settings.clusterWorkers }, "cluster started");
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    process.once(signal, () => {
      log.info({ signal }, "shutting down the cluster");
      stopping = true;
      exitInTime();
      const workers = Object.values(cluster.workers ?? {});
      if (workers.length === 0) process.exit(0);
      for (const worker of workers) worker?.process.kill(signal);
    });
  }
}

async function serve(): Promise<void> {
  try {
    const server = await startServer(env, logger);
    for (const signal of ["SIGTERM", "SIGINT"] as const) {
      process.once(signal, () => {
        logger.info({ signal }, "shutting down");
        exitInTime();
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
}

if (env.clusterWorkers > 1 && cluster.isPrimary) supervise(env, logger);
else await serve();
