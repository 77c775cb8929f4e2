import path from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import type { WorkerOptions } from "./automations/worker.js";
import type { ImportRunnerOptions } from "./imports/runner.js";
import { heartbeatOf, type UploadPace } from "./imports/upload.js";
import type { ConnectionLimits } from "./api/http-server.js";

/**
 * The only module that reads `process.env`. Everything the service can be told
 * from outside is validated here once, so a typo fails at start, not at 3 a.m.
 */
const bool = z
  .enum(["true", "false", "1", "0", "yes", "no", "on", "off"])
  .transform((value) => ["true", "1", "yes", "on"].includes(value));

const envSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().min(1).default("127.0.0.1"),
  DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/ }).optional(),
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(1000).default(10),
  DATA_DIR: z.string().min(1).default(".data"),
  ADMIN_TOKEN: z
    .string()
    .min(24, "must be at least 24 characters (for example: openssl rand -hex 24)")
    .refine((token) => new Set(token).size >= 10, "is too weak: use a random token (for example: openssl rand -hex 24)")
    .optional(),
  ADMIN_REMOTE: bool.default(false),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  /** Unset: pretty in a terminal, JSON lines otherwise. */
  LOG_FORMAT: z.enum(["json", "pretty"]).optional(),
  BODY_LIMIT_BYTES: z.coerce.number().int().min(1024).default(1024 * 1024),
  /** What the request bodies a process holds at once may weigh in memory; past it, 503 server_busy. */
  BODY_MEMORY_BYTES: z.coerce.number().int().min(1024 * 1024).default(128 * 1024 * 1024),
  RATE_LIMIT_REQUESTS: z.coerce.number().int().min(0).default(1000),
  RATE_LIMIT_WINDOW_SECONDS: z.coerce.number().int().min(1).default(10),
  SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().min(0).default(10_000),
  SEED_DEMO: bool.default(true),
  RUN_WORKER: bool.default(true),
  /**
   * Unset: one group at a time when delivery is local (the worker then takes
   * no more than a core from the pushes in a burst, and catches up right
   * after; groups beside each other also lock the same customers and
   * contacts), four jobs at a time by webhook (a slow receiver must not hold the others).
   */
  WORKER_CONCURRENCY: z.coerce.number().int().min(1).max(64).optional(),
  /** Jobs one worker slot runs in one transaction (local delivery). */
  WORKER_BATCH_SIZE: z.coerce.number().int().min(1).max(1000).default(250),
  /** Server processes sharing the port (PostgreSQL only): more cores for the API. */
  CLUSTER_WORKERS: z.coerce.number().int().min(1).max(64).default(1),
  WORKER_POLL_MS: z.coerce.number().int().min(10).default(500),
  JOB_LEASE_SECONDS: z.coerce.number().int().min(1).default(60),
  JOB_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(100).default(8),
  JOB_BACKOFF_BASE_MS: z.coerce.number().int().min(1).default(2000),
  JOB_BACKOFF_MAX_MS: z.coerce.number().int().min(1).default(3_600_000),
  MESSAGING_WEBHOOK_URL: z.url({ protocol: /^https?$/ }).optional(),
  MESSAGING_WEBHOOK_SECRET: z.string().min(16).optional(),
  MESSAGING_WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).default(10_000),
  WEBHOOK_ALLOW_PRIVATE_ADDRESSES: bool.default(false),
  SMTP_URL: z.url({ protocol: /^smtps?$/ }).optional(),
  MAIL_FROM: z.string().min(3).max(200).default("Commerce Ingest <no-reply@localhost>"),
  HEADERS_TIMEOUT_MS: z.coerce.number().int().min(100).default(10_000),
  REQUEST_TIMEOUT_MS: z.coerce.number().int().min(100).default(30_000),
  KEEP_ALIVE_TIMEOUT_MS: z.coerce.number().int().min(100).default(5_000),
  MAX_CONNECTIONS: z.coerce.number().int().min(1).default(1_000),
  REQUEST_DEADLINE_MS: z.coerce.number().int().min(100).default(15_000),
  DATABASE_CONNECT_TIMEOUT_MS: z.coerce.number().int().min(100).default(5_000),
  DATABASE_STATEMENT_TIMEOUT_MS: z.coerce.number().int().min(100).default(5_000),
  PUBLIC_URL: z.url({ protocol: /^https?$/ }).optional(),
  COOKIE_SECURE: bool.default(false),
  SESSION_IDLE_MINUTES: z.coerce.number().int().min(1).default(12 * 60),
  SESSION_MAX_HOURS: z.coerce.number().int().min(1).default(7 * 24),
  /** How long the request log keeps calls (and the bodies it keeps of them). */
  REQUEST_LOG_RETENTION_DAYS: z.coerce.number().int().min(1).max(90).optional(),
  /** The earlier name of REQUEST_LOG_RETENTION_DAYS, still read when the new one is unset. */
  REQUEST_LOG_DAYS: z.coerce.number().int().min(1).max(90).default(7),
  CONSOLE_DIR: z.string().min(1).optional(),
  /** The largest file an import takes, uncompressed. */
  IMPORT_LIMIT_BYTES: z.coerce.number().int().min(1024).default(1024 * 1024 * 1024),
  /** Imports one team runs at once; the others wait, queued. */
  IMPORTS_PER_TEAM: z.coerce.number().int().min(1).max(100).default(2),
  /** Chunks of imports this process reads and merges at once; 0: it runs none (another process does). */
  IMPORT_CONCURRENCY: z.coerce.number().int().min(0).max(16).default(2),
  /**
   * While this process serves live API calls, the share of its time an import's chunks take (one chunk at a
   * time, then a pause of the rest); 1: imports never yield.
   */
  IMPORT_LIVE_SHARE: z.coerce.number().min(0.05).max(1).default(0.15),
  /** How long a process holds an import's chunk before another may take it over (were it to die mid-chunk). */
  IMPORT_LEASE_SECONDS: z.coerce.number().int().min(1).default(60),
  /** Import files this process receives at once; past them an upload is answered 503 before a byte is read. */
  IMPORT_UPLOADS_AT_ONCE: z.coerce.number().int().min(1).max(256).default(4),
  /** An import's chunk ends at the first line that brings it to this many bytes (or at 2,000 lines). */
  IMPORT_CHUNK_BYTES: z.coerce.number().int().min(64 * 1024).max(64 * 1024 * 1024).default(1024 * 1024),
  /** The least an upload must send a second, on average over each REQUEST_TIMEOUT_MS the service waits for it. */
  IMPORT_UPLOAD_MIN_BYTES_PER_SECOND: z.coerce.number().int().min(0).default(16 * 1024),
  /** The longest an upload may take in all. */
  IMPORT_UPLOAD_TIMEOUT_MS: z.coerce.number().int().min(1000).default(3_600_000),
  /** An upload whose server stopped saying it is alive this long ago (it died mid-way) fails as interrupted. */
  IMPORT_UPLOAD_STALE_SECONDS: z.coerce.number().int().min(3).max(3600).default(45),
});

export type Env = {
  port: number;
  host: string;
  databaseUrl: string | undefined;
  databasePoolSize: number;
  /** How long a request may wait for a database connection, and for one statement: past either it answers 503. */
  databaseTimeouts: { connectMs: number; statementMs: number };
  connections: ConnectionLimits;
  /** The longest a REST request may take before it is answered 503. */
  requestDeadlineMs: number;
  dataDir: string;
  adminToken: string | undefined;
  /** Whether the operator API and /metrics answer callers other than this machine. */
  adminRemote: boolean;
  logLevel: z.infer<typeof envSchema>["LOG_LEVEL"];
  /** Server processes to run on the one port; 1: this process serves. */
  clusterWorkers: number;
  /** JSON lines for machines; pretty for a person at a terminal. */
  logFormat: "json" | "pretty";
  bodyLimitBytes: number;
  bodyMemoryBytes: number;
  rateLimit: { requests: number; windowSeconds: number };
  shutdownTimeoutMs: number;
  seedDemo: boolean;
  runWorker: boolean;
  worker: WorkerOptions;
  imports: { uploadLimitBytes: number; chunkBytes: number; uploadsAtOnce: number; pace: UploadPace; heartbeatMs: number; runner: ImportRunnerOptions };
  webhook: { url: string; secret: string; timeoutMs: number } | undefined;
  /** How the console's mails leave (invitations, password resets): SMTP, or the log when unset. */
  mail: { smtpUrl: string | undefined; from: string };
  /** Stores' own endpoints: how long a delivery may take, and whether private addresses may be one. */
  endpoints: { timeoutMs: number; allowPrivate: boolean };
  /** Where the console is reached; unset: http://HOST:PORT. */
  publicUrl: string | undefined;
  console: { cookieSecure: boolean; sessionIdleSeconds: number; sessionMaxSeconds: number; requestLogSeconds: number; dir: string };
};

/** The built web console, beside the server's own folder in the workspace (the same from src/ and dist/). */
const BUILT_CONSOLE = fileURLToPath(new URL("../../web/dist/", import.meta.url));

export function parseEnv(source: Record<string, string | undefined>): Env {
  // An empty variable means "not set", as most shells and .env files intend.
  const present = Object.fromEntries(Object.entries(source).filter(([, value]) => value !== ""));
  const result = envSchema.safeParse(present);
  if (!result.success) {
    const problems = result.error.issues.map((issue) => `  ${issue.path.join(".")}: ${issue.message}`);
    throw new Error(`Invalid configuration:\n${problems.join("\n")}`);
  }
  const env = result.data;
  if (env.MESSAGING_WEBHOOK_URL && !env.MESSAGING_WEBHOOK_SECRET) {
    throw new Error("Invalid configuration:\n  MESSAGING_WEBHOOK_SECRET: is required with MESSAGING_WEBHOOK_URL (at least 16 characters)");
  }
  if (env.MESSAGING_WEBHOOK_URL && env.MESSAGING_WEBHOOK_TIMEOUT_MS + env.DATABASE_CONNECT_TIMEOUT_MS >= env.JOB_LEASE_SECONDS * 1000) {
    // A job's lease must outlast its wait for a connection and its delivery, or it would be
    // taken over and sent twice at once.
    throw new Error(
      `Invalid configuration:\n  MESSAGING_WEBHOOK_TIMEOUT_MS: with DATABASE_CONNECT_TIMEOUT_MS, must be shorter than JOB_LEASE_SECONDS (${env.JOB_LEASE_SECONDS} s), or a second worker would deliver while the first still waits`,
    );
  }
  if (env.CLUSTER_WORKERS > 1 && !env.DATABASE_URL) {
    throw new Error(
      "Invalid configuration:\n  CLUSTER_WORKERS: more than one server process needs PostgreSQL (DATABASE_URL); the embedded database belongs to one process",
    );
  }
  const workerConcurrency = env.WORKER_CONCURRENCY ?? (env.MESSAGING_WEBHOOK_URL ? 4 : 1);
  if (env.DATABASE_URL && env.RUN_WORKER && workerConcurrency >= env.DATABASE_POOL_SIZE) {
    throw new Error(
      `Invalid configuration:\n  WORKER_CONCURRENCY: must be below DATABASE_POOL_SIZE (${env.DATABASE_POOL_SIZE}) when the worker runs in the server, or it could take every connection from the requests`,
    );
  }
  return {
    port: env.PORT,
    host: env.HOST,
    databaseUrl: env.DATABASE_URL,
    databasePoolSize: env.DATABASE_POOL_SIZE,
    databaseTimeouts: { connectMs: env.DATABASE_CONNECT_TIMEOUT_MS, statementMs: env.DATABASE_STATEMENT_TIMEOUT_MS },
    requestDeadlineMs: env.REQUEST_DEADLINE_MS,
    connections: {
      headersTimeoutMs: Math.min(env.HEADERS_TIMEOUT_MS, env.REQUEST_TIMEOUT_MS),
      requestTimeoutMs: env.REQUEST_TIMEOUT_MS,
      keepAliveTimeoutMs: env.KEEP_ALIVE_TIMEOUT_MS,
      maxConnections: env.MAX_CONNECTIONS,
    },
    dataDir: path.resolve(env.DATA_DIR),
    adminToken: env.ADMIN_TOKEN,
    adminRemote: env.ADMIN_REMOTE,
    logLevel: env.LOG_LEVEL,
    clusterWorkers: env.CLUSTER_WORKERS,
    logFormat: env.LOG_FORMAT ?? (process.stdout.isTTY ? "pretty" : "json"),
    bodyLimitBytes: env.BODY_LIMIT_BYTES,
    bodyMemoryBytes: env.BODY_MEMORY_BYTES,
    rateLimit: { requests: env.RATE_LIMIT_REQUESTS, windowSeconds: env.RATE_LIMIT_WINDOW_SECONDS },
    shutdownTimeoutMs: env.SHUTDOWN_TIMEOUT_MS,
    seedDemo: env.SEED_DEMO,
    runWorker: env.RUN_WORKER,
    worker: {
      concurrency: workerConcurrency,
      batchSize: env.WORKER_BATCH_SIZE,
      pollIntervalMs: env.WORKER_POLL_MS,
      leaseSeconds: env.JOB_LEASE_SECONDS,
      maxAttempts: env.JOB_MAX_ATTEMPTS,
      backoffBaseMs: env.JOB_BACKOFF_BASE_MS,
      backoffMaxMs: env.JOB_BACKOFF_MAX_MS,
    },
    imports: {
      uploadLimitBytes: env.IMPORT_LIMIT_BYTES,
      chunkBytes: env.IMPORT_CHUNK_BYTES,
      uploadsAtOnce: env.IMPORT_UPLOADS_AT_ONCE,
      // Silence and the rate's window are the request timeout every other body has.
      pace: { silenceMs: env.REQUEST_TIMEOUT_MS, windowMs: env.REQUEST_TIMEOUT_MS, minBytesPerSecond: env.IMPORT_UPLOAD_MIN_BYTES_PER_SECOND, totalMs: env.IMPORT_UPLOAD_TIMEOUT_MS },
      heartbeatMs: heartbeatOf(env.IMPORT_UPLOAD_STALE_SECONDS),
      runner: {
        concurrency: env.IMPORT_CONCURRENCY,
        liveShare: env.IMPORT_LIVE_SHARE,
        leaseSeconds: env.IMPORT_LEASE_SECONDS,
        perTeam: env.IMPORTS_PER_TEAM,
        pollIntervalMs: env.WORKER_POLL_MS,
        abandonedAfterSeconds: env.IMPORT_UPLOAD_STALE_SECONDS,
      },
    },
    webhook:
      env.MESSAGING_WEBHOOK_URL && env.MESSAGING_WEBHOOK_SECRET
        ? { url: env.MESSAGING_WEBHOOK_URL, secret: env.MESSAGING_WEBHOOK_SECRET, timeoutMs: env.MESSAGING_WEBHOOK_TIMEOUT_MS }
        : undefined,
    endpoints: { timeoutMs: env.MESSAGING_WEBHOOK_TIMEOUT_MS, allowPrivate: env.WEBHOOK_ALLOW_PRIVATE_ADDRESSES },
    mail: { smtpUrl: env.SMTP_URL, from: env.MAIL_FROM },
    publicUrl: env.PUBLIC_URL?.replace(/\/+$/, ""),
    console: {
      cookieSecure: env.COOKIE_SECURE,
      sessionIdleSeconds: env.SESSION_IDLE_MINUTES * 60,
      sessionMaxSeconds: env.SESSION_MAX_HOURS * 3600,
      requestLogSeconds: (env.REQUEST_LOG_RETENTION_DAYS ?? env.REQUEST_LOG_DAYS) * 24 * 3600,
      dir: path.resolve(env.CONSOLE_DIR ?? BUILT_CONSOLE),
    },
  };
}

export function loadEnv(): Env {
  return parseEnv(process.env);
}

/** What the admin command line needs: where the operator API is and how to reach it. */
export type CliEnv = { adminUrl: string; adminToken: string | undefined; dataDir: string };

export function loadCliEnv(): CliEnv {
  const source = process.env;
  const port = source.PORT && source.PORT !== "" ? source.PORT : "3000";
  return {
    adminUrl: source.ADMIN_URL && source.ADMIN_URL !== "" ? source.ADMIN_URL : `http://127.0.0.1:${port}`,
    adminToken: source.ADMIN_TOKEN && source.ADMIN_TOKEN !== "" ? source.ADMIN_TOKEN : undefined,
    dataDir: path.resolve(source.DATA_DIR && source.DATA_DIR !== "" ? source.DATA_DIR : ".data"),
  };
}
