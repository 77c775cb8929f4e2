import type { AddressInfo } from "node:net";
import { resolveAdminToken } from "./tenancy/admin-token.js";
import { providerFromEnv, startWorker, type Worker } from "./automations/index.js";
import { startImportRunner } from "./imports/runner.js";
import { LiveTraffic } from "./traffic.js";
import { uploadSlots } from "./imports/upload.js";
import { createSignInLimiters, INVITATION_DAYS, type AccountSettings } from "./accounts/member.service.js";
import { AccessCache, startAccessSync, AUTH_FAILURE_LIMIT, createLeasedRateLimiter, createRateLimiter } from "./tenancy/access.js";
import { startRequestLog } from "./requests/request-log.service.js";
import { openDatabase, type DatabaseHandle } from "./db/index.js";
import { configureRetries } from "./db/sql.js";
import { migrateToLatest } from "./db/migrate.js";
import { startUpkeep } from "./db/upkeep.js";
import type { Env } from "./env.js";
import { createApp } from "./app.js";
import { createMailer } from "./accounts/mail.js";
import { createHttpServer } from "./api/http-server.js";
import { createMetrics } from "./api/metrics.js";
import type { Logger } from "./logger.js";
import { demoBanner, seedDemo } from "./seed.js";

export type RunningServer = {
  url: string;
  database: DatabaseHandle;
  /** Stops accepting, lets in-flight requests finish (up to the shutdown timeout), closes the database. */
  close(): Promise<void>;
};

function publicHost(host: string): string {
  if (host === "0.0.0.0" || host === "::") return "127.0.0.1";
  return host.includes(":") ? `[${host}]` : host;
}

export async function startServer(env: Env, logger: Logger, print: (text: string) => void = console.log): Promise<RunningServer> {
  configureRetries({ timeoutBudgetMs: env.requestDeadlineMs });
  const database = await openDatabase(
    env.databaseUrl
      ? { kind: "postgres", url: env.databaseUrl, poolSize: env.databasePoolSize, timeouts: env.databaseTimeouts }
      : { kind: "embedded", dataDir: env.dataDir },
  );
  try {
    const applied = await database.withoutTimeouts(migrateToLatest);
    logger.info({ database: database.kind, applied }, "database ready");
    const mailer = createMailer(env.mail, logger);
    // A deployment's invitations and password resets carry secret links: without a mail sender they are in its log.
    if (database.kind === "postgres" && !mailer.configured) {
      logger.warn("no SMTP_URL: invitation and password reset mails are written to this log, links included; set SMTP_URL (see docs/operations.md)");
    }
    const adminToken = resolveAdminToken(env.adminToken, env.dataDir);
    const worker: Worker | undefined = env.runWorker
      ? startWorker({ db: database.db, logger, provider: providerFromEnv(env), endpoints: env.endpoints }, env.worker)
      : undefined;
    // Imports in this process yield to the API calls it serves (live pushes first).
    const live = new LiveTraffic();
    const imports = env.imports.runner.concurrency > 0 ? startImportRunner({ db: database.db, logger, live, sideBySide: database.kind === "postgres" }, env.imports.runner) : undefined;
    // The public URL is known once the server listens (PORT may be 0); invitation links read it then.
    const settings: AccountSettings = {
      publicUrl: env.publicUrl ?? "",
      sessionIdleSeconds: env.console.sessionIdleSeconds,
      sessionMaxSeconds: env.console.sessionMaxSeconds,
      invitationSeconds: INVITATION_DAYS * 24 * 3600,
    };
    const requestLog = startRequestLog(database.db, logger, env.console.requestLogSeconds);
    const uploads = uploadSlots(env.imports.uploadsAtOnce);
    const accessCache = new AccessCache();
    const stopAccessSync = await startAccessSync(database, accessCache, logger);
    // The embedded database's autovacuum; on PostgreSQL, analyzes that do not wait for autovacuum's next look.
    const stopUpkeep = startUpkeep(database.db, database.kind, logger);
    const app = createApp(
      {
        db: database.db,
        logger,
        // Shared by every process through PostgreSQL, leased in chunks so a push is not a counter write.
        rateLimiter: database.pool ? createLeasedRateLimiter(createRateLimiter(env.rateLimit, database.pool)) : createRateLimiter(env.rateLimit, undefined),
        accessCache,
        adminToken,
        adminRemote: env.adminRemote,
        authFailures: createRateLimiter(AUTH_FAILURE_LIMIT, database.pool, "auth-failures"),
        accounts: { settings, limiters: createSignInLimiters(database.pool), cookieSecure: env.console.cookieSecure, mailer },
        requestLog,
        metrics: createMetrics(database.db, database.pool, accessCache, uploads),
        // The in-process worker's own nudge: a write's jobs are claimed at once.
        afterWrite: worker?.nudge,
        endpoints: env.endpoints,
        live,
        imports: {
          uploadLimitBytes: env.imports.uploadLimitBytes,
          lineBytes: env.bodyLimitBytes,
          chunkBytes: env.imports.chunkBytes,
          pace: env.imports.pace,
          slots: uploads,
          heartbeatMs: env.imports.heartbeatMs,
          nudge: () => imports?.nudge(),
        },
      },
      {
        bodyLimitBytes: env.bodyLimitBytes,
        bodyMemoryBytes: env.bodyMemoryBytes,
        bodyTimeoutMs: env.connections.requestTimeoutMs,
        consoleDir: env.console.dir,
        requestDeadlineMs: env.requestDeadlineMs,
      },
    );

    const server = createHttpServer(app, env.connections);
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(env.port, env.host, () => resolve());
    });
    const { port } = server.address() as AddressInfo;
    const url = `http://${publicHost(env.host)}:${port}`;
    settings.publicUrl ||= url;
    logger.info({ url, database: database.kind, worker: Boolean(worker) }, "listening");

    if (database.kind === "embedded" && env.seedDemo) {
      const demo = await seedDemo(database.db, env.dataDir, url);
      if (demo) print(demoBanner(demo));
    }

    let closing: Promise<void> | undefined;
    const close = () => {
      closing ??= (async () => {
        const drained = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        // Requests in flight get most of the shutdown budget; the rest is for the worker, the log and the pool.
        const timer = setTimeout(() => server.closeAllConnections(), Math.round(env.shutdownTimeoutMs * 0.7));
        await drained;
        clearTimeout(timer);
        await Promise.all([worker?.stop(), imports?.stop()]);
        await requestLog.close();
        await stopAccessSync();
        await stopUpkeep();
        await database.close();
        logger.info("stopped");
      })();
      return closing;
    };
    return { url, database, close };
  } catch (error) {
    await database.close();
    throw error;
  }
}
