import type { AddressInfo } from "node:net";
import { startImportRunner, type ImportRunnerOptions } from "../src/imports/runner.js";
import { heartbeatOf, uploadSlots, type UploadPace } from "../src/imports/upload.js";
import { sql } from "kysely";
import { afterAll, beforeAll } from "vitest";
import pg from "pg";
import { pino } from "pino";
import { AccessCache, startAccessSync, createRateLimiter, type RateLimitOptions } from "../src/tenancy/access.js";
import { createSignInLimiters, type AccountSettings, type SIGN_IN_LIMITS } from "../src/accounts/member.service.js";
import { startRequestLog } from "../src/requests/request-log.service.js";
import { recordingProvider, type MessagingProvider } from "../src/automations/providers.js";
import { createMailer, type Mail, type Mailer } from "../src/accounts/mail.js";
import { startWorker, type Worker, type WorkerOptions } from "../src/automations/worker.js";
import * as tenants from "../src/tenancy/tenant.service.js";
import { openDatabase, type DatabaseHandle } from "../src/db/index.js";
import { migrateToLatest } from "../src/db/migrate.js";
import { checkStatements } from "../src/db/sql.js";
import type { Db } from "../src/db/types.js";
import { createApp } from "../src/app.js";
import { LiveTraffic } from "../src/traffic.js";
import { createHttpServer, DEFAULT_CONNECTION_LIMITS, type ConnectionLimits } from "../src/api/http-server.js";
import { createMetrics } from "../src/api/metrics.js";
import { createLogger, type Logger } from "../src/logger.js";

/** The server's mail sender, keeping a copy of each mail it sends (a test reads them as a person reads their inbox). */
function keptMailer(mailer: Mailer, kept: Mail[]): Mailer {
  return {
    configured: mailer.configured,
    async send(mail) {
      kept.push(mail);
      await mailer.send(mail);
    },
  };
}

// Every statement compiled once per shape is checked, at every run of the suites, against the one its own values make.
checkStatements(true);

export const testDb = process.env.TEST_DB === "postgres" ? "postgres" : "embedded";
/**
 * For tests where the database makes no difference (process signals, the
 * command line): true on one database of the run only, PostgreSQL when the
 * run has it, as production has.
 */
export const onceAcrossDatabases = testDb === ((process.env.TEST_DATABASES ?? "embedded").includes("postgres") ? "postgres" : "embedded");
export const ADMIN_TOKEN = "test-admin-token-0123456789";

/**
 * A fresh database for one test file: an in-memory embedded one, or a new
 * PostgreSQL database created for the file and dropped after it.
 */
export async function createTestDatabase(): Promise<{ handle: DatabaseHandle; url: string | undefined; drop(): Promise<void> }> {
  if (testDb === "embedded") {
    const handle = await openDatabase({ kind: "embedded", dataDir: undefined });
    await migrateToLatest(handle.db);
    return { handle, url: undefined, drop: () => handle.close() };
  }
  const serverUrl = process.env.TEST_DATABASE_URL;
  if (!serverUrl) throw new Error("TEST_DATABASE_URL is required when TEST_DB=postgres");
  const name = `ci_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const handle = await openDatabase({ kind: "postgres", url: url.toString(), poolSize: 20 });
  await migrateToLatest(handle.db);
  return {
    handle,
    url: url.toString(),
    async drop() {
      await handle.close();
      const cleanup = new pg.Client({ connectionString: serverUrl });
      await cleanup.connect();
      await cleanup.query(`drop database if exists ${name} with (force)`);
      await cleanup.end();
    },
  };
}

export type ApiResponse = {
  status: number;
  headers: Headers;
  text: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read arbitrary JSON bodies
  body: any;
};

export type RequestOptions = {
  key?: string | null;
  body?: unknown;
  rawBody?: string | Buffer;
  contentType?: string | null;
  headers?: Record<string, string>;
};

export type TestServer = Awaited<ReturnType<typeof startTestServer>>;

/** The real app on a real port over a real database; requests go through HTTP. */
export const FAST_WORKER: WorkerOptions = {
  concurrency: 4,
  batchSize: 100,
  pollIntervalMs: 20,
  leaseSeconds: 30,
  maxAttempts: 3,
  backoffBaseMs: 50,
  backoffMaxMs: 1000,
};

export async function startTestServer(
  options: {
    rateLimit?: RateLimitOptions;
    bodyLimitBytes?: number;
    bodyMemoryBytes?: number;
    database?: DatabaseHandle;
    /** Runs an automation worker in this process, as the server does by default. */
    worker?: Partial<WorkerOptions> & { provider?: MessagingProvider };
    logger?: Logger;
    accounts?: Partial<AccountSettings>;
    signInLimits?: typeof SIGN_IN_LIMITS;
    consoleDir?: string;
    connections?: Partial<ConnectionLimits>;
    requestDeadlineMs?: number;
    /** Runs an import runner in this process, as the server does by default. */
    imports?: Partial<ImportRunnerOptions> & { uploadLimitBytes?: number; chunkBytes?: number; uploadsAtOnce?: number; pace?: Partial<UploadPace> };
    /** Failed authentications per address before 429; off unless given. */
    authFailureLimit?: RateLimitOptions;
    /** Where the console's mails go (a test's SMTP server); unset: the log. */
    smtpUrl?: string;
    /** Stores' own endpoints: private addresses allowed (a test's receiver is on loopback) unless said otherwise. */
    endpoints?: { timeoutMs?: number; allowPrivate?: boolean };
  } = {},
) {
  let created: Awaited<ReturnType<typeof createTestDatabase>> | undefined;
  let handle: DatabaseHandle;
  if (options.database) {
    handle = options.database;
  } else {
    created = await createTestDatabase();
    handle = created.handle;
  }
  const logger = options.logger ?? createLogger(process.env.TEST_LOG_LEVEL ?? "silent");
  const endpoints = { timeoutMs: 2000, allowPrivate: true, ...options.endpoints };
  /** Every mail this server sent (by SMTP, or to its log when it has no mail sender), as a reader of the log finds them. */
  const mails: Mail[] = [];
  let worker: Worker | undefined;
  if (options.worker) {
    const { provider = recordingProvider(), ...workerOptions } = options.worker;
    worker = startWorker({ db: handle.db, logger, provider, endpoints }, { ...FAST_WORKER, ...workerOptions });
  }
  const { uploadLimitBytes = 1024 * 1024 * 1024, chunkBytes = 1024 * 1024, uploadsAtOnce = 4, pace, ...runnerOptions } = options.imports ?? {};
  const requestTimeoutMs = options.connections?.requestTimeoutMs ?? DEFAULT_CONNECTION_LIMITS.requestTimeoutMs;
  // As in production, the imports of this process yield to the API calls it serves (when given a share below 1).
  const live = new LiveTraffic();
  const imports = options.imports ? startImportRunner({ db: handle.db, logger, live, sideBySide: handle.kind === "postgres" }, { concurrency: 2, leaseSeconds: 30, perTeam: 2, pollIntervalMs: 20, ...runnerOptions }) : undefined;
  const settings: AccountSettings = { publicUrl: "", sessionIdleSeconds: 3600, sessionMaxSeconds: 24 * 3600, invitationSeconds: 7 * 24 * 3600, ...options.accounts };
  const requestLog = startRequestLog(handle.db, logger, 7 * 24 * 3600);
  // As in production: key lookups cached, forgotten on every change to keys and stores.
  const accessCache = new AccessCache();
  const stopAccessSync = await startAccessSync(handle, accessCache);
  const limits = { ...DEFAULT_CONNECTION_LIMITS, ...options.connections };
  const app = createApp(
    {
      db: handle.db,
      logger,
      rateLimiter: createRateLimiter(options.rateLimit ?? { requests: 0, windowSeconds: 1 }, handle.pool),
      accessCache,
      adminToken: ADMIN_TOKEN,
      ...(options.authFailureLimit ? { authFailures: createRateLimiter(options.authFailureLimit, handle.pool, "auth-failures") } : {}),
      accounts: { settings, limiters: createSignInLimiters(handle.pool, options.signInLimits), cookieSecure: false, mailer: keptMailer(createMailer({ smtpUrl: options.smtpUrl, from: "Console <console@test.example>" }, logger), mails) },
      requestLog,
      metrics: createMetrics(handle.db, handle.pool),
      afterWrite: () => worker?.nudge(),
      endpoints,
      live,
      imports: {
        uploadLimitBytes,
        lineBytes: options.bodyLimitBytes ?? 1024 * 1024,
        chunkBytes,
        pace: { silenceMs: requestTimeoutMs, windowMs: requestTimeoutMs, minBytesPerSecond: 16 * 1024, totalMs: 3_600_000, ...pace },
        slots: uploadSlots(uploadsAtOnce),
        heartbeatMs: heartbeatOf(runnerOptions.abandonedAfterSeconds ?? 45),
        nudge: () => imports?.nudge(),
      },
    },
    {
      bodyLimitBytes: options.bodyLimitBytes ?? 1024 * 1024,
      bodyMemoryBytes: options.bodyMemoryBytes,
      bodyTimeoutMs: limits.requestTimeoutMs,
      consoleDir: options.consoleDir,
      requestDeadlineMs: options.requestDeadlineMs,
    },
  );
  const server = createHttpServer(app, limits);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  settings.publicUrl ||= url;

  async function request(method: string, path: string, opts: RequestOptions = {}): Promise<ApiResponse> {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.key) headers.Authorization = `Bearer ${opts.key}`;
    let body: string | Buffer | undefined;
    if (opts.rawBody !== undefined) body = opts.rawBody;
    else if (opts.body !== undefined) body = JSON.stringify(opts.body);
    const contentType = opts.contentType === undefined ? (body !== undefined ? "application/json" : null) : opts.contentType;
    if (contentType) headers["Content-Type"] = contentType;
    const response = await fetch(url + path, { method, headers, body });
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      parsed = null;
    }
    return { status: response.status, headers: response.headers, text, body: parsed };
  }

  /** A team with one store and a team-wide key: what most tests start from. */
  async function createTenant(store: { country?: string | null; paused?: boolean } = {}) {
    const team = await tenants.createTeam(handle.db, `Team ${Math.random().toString(36).slice(2, 8)}`);
    const shop = await tenants.createStore(handle.db, { team_id: team.id, name: "Shop", country: store.country === undefined ? "US" : store.country });
    if (store.paused) await tenants.updateStore(handle.db, shop.id, { paused: true });
    const key = await tenants.createApiKey(handle.db, { team_id: team.id, name: "key" });
    return { team, store: shop, key: key.key, keyId: key.id };
  }

  return {
    url,
    db: handle.db,
    handle,
    mails,
    request,
    createTenant,
    worker,
    requestLog,
    /** Who may push where, as this server remembers it (a test that holds the database reads its hits and misses). */
    accessCache,
    /** The live API calls its imports yield to, as the app counts them. */
    live,
    async close() {
      await Promise.all([worker?.stop(), imports?.stop()]);
      await requestLog.close();
      await stopAccessSync();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      if (created) await created.drop();
    },
  };
}

/**
 * Makes the database itself refuse inserts into `table` (only of rows whose
 * external_id starts with `prefix`, when given): a failure in the middle of a
 * transaction, after its earlier statements ran. Returns the function that
 * removes it again.
 */
export async function refuseInserts(
  db: Db,
  table: "orders" | "checkouts" | "shipments" | "api_keys",
  prefix?: string,
  /** The SQLSTATE to fail with (57P01, admin_shutdown, is the database going away); a plain exception by default. */
  errcode = "P0001",
): Promise<() => Promise<void>> {
  const name = `refuse_${table}_${Math.random().toString(36).slice(2, 8)}`;
  const when = prefix === undefined ? "" : `when (new.external_id like '${prefix}%')`;
  await sql.raw(`create function ${name}() returns trigger language plpgsql as $$ begin raise exception 'refused' using errcode = '${errcode}'; end $$`).execute(db);
  await sql.raw(`create trigger ${name} before insert on ${table} for each row ${when} execute function ${name}()`).execute(db);
  return async () => {
    await sql.raw(`drop trigger ${name} on ${table}`).execute(db);
    await sql.raw(`drop function ${name}()`).execute(db);
  };
}

export type TestTenant = Awaited<ReturnType<TestServer["createTenant"]>>;

/**
 * A test file's server and tenant: started before its tests, closed after
 * them; `ready` receives both (the file keeps them in its own variables).
 */
export function withTestServer(ready: (server: TestServer, tenant: TestTenant) => void, options?: Parameters<typeof startTestServer>[0]): void {
  let started: TestServer | undefined;
  beforeAll(async () => {
    started = await startTestServer(options);
    ready(started, await started.createTenant());
  });
  afterAll(() => started?.close());
}

/** The value of one series of the service's /metrics, named as it prints it (`name{label="value"}`); a series it does not print fails the test. */
export async function metricValue(server: TestServer, series: string): Promise<number> {
  const text = (await server.request("GET", "/metrics", { key: ADMIN_TOKEN })).text;
  const escaped = series.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const value = new RegExp(`^${escaped} (\\d+)$`, "m").exec(text)?.[1];
  if (value === undefined) throw new Error(`/metrics has no series ${series}`);
  return Number(value);
}

/** How many times the service ran a transaction again for `reason` (its metrics' `db_retries_total`). */
export const retriesCounted = (server: TestServer, reason: string): Promise<number> => metricValue(server, `db_retries_total{reason="${reason}"}`);

/** A logger for a test server that keeps its warnings and errors in `lines` (a test reads what the service said). */
export const warningsInto = (lines: string[]) => pino({ level: "warn" }, { write: (line: string) => lines.push(line) });

let unique = 0;
/** A key no other test of the run uses. */
export const uid = (prefix: string) => `${prefix}-${Date.now()}-${++unique}`;

/** An order's push body as the tests send it, under a key no other test uses; `fields` replace or add fields. */
export const orderBody = <F extends object>(fields: F = {} as F) => ({ external_id: uid("order"), placed_at: "2026-11-22T10:00:00Z", total_price: 10, customer: { phone: "+14155552671" }, ...fields });

/** An abandoned checkout's push body as the tests send it, under a key no other test uses; `fields` replace or add fields. */
export const checkoutBody = <F extends object>(fields: F = {} as F) => ({ external_id: uid("checkout"), abandoned_at: "2026-11-22T09:00:00Z", total_price: 80, customer: { phone: "+14155552671" }, ...fields });
