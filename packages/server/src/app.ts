import { sql } from "kysely";
import express, { type NextFunction, type Request, type Response } from "express";
import { createContextInner, type Context, type Services } from "./context.js";
import { CONSOLE_API_PREFIX, createConsoleApi, createConsolePages } from "./api/console/console.http.js";
import { createLiveView, LIVE_PREFIX } from "./api/console/live.js";
import { isDatabaseUnavailable } from "./db/index.js";
import { appRouter } from "./router.js";
import { createDocsRouter } from "./api/docs.js";
import { errorForLog, pathForLog } from "./logger.js";
import { lingerAfterAnswer, refuseTooLarge, sendErrorCode } from "./api/errors.js";
import { buildOpenApiDocument } from "./api/openapi.js";
import { bearerToken, looksLikeApiKey, secretsEqual, callerOf, isLocalAddress, parseStoreId } from "./tenancy/access.js";
import { idempotencyRequestOf } from "./records/procedures.js";
import { bodyBudget, createRestRouter } from "./api/rest.js";
import { answerProtocolError, DEFAULT_CONNECTION_LIMITS } from "./api/http-server.js";
import type http from "node:http";
import type { LiveTraffic } from "./traffic.js";
import { UNKNOWN_KEY_PREFIX, type RequestLog } from "./requests/request-log.service.js";
import { externalIdOf } from "./records/write-path.js";
import type { Metrics } from "./api/metrics.js";
import { storableJson } from "./text.js";

export type AppOptions = {
  bodyLimitBytes: number;
  /** What the request bodies this process holds at once may weigh (see `bodyBudget`); unset: 128 MiB. */
  bodyMemoryBytes?: number;
  /** The time a request's body has to arrive whole (an upload's pace is its own); unset: 30 s. */
  bodyTimeoutMs?: number;
  /** REST requests answer 503 past this. */
  requestDeadlineMs?: number;
  /** The built web console; its pages are served when it exists. */
  consoleDir?: string | undefined;
};

/** The console's bodies are small JSON (64 KiB at most), parsed before they are weighed: taken at their worst. */
const CONSOLE_BODY_LIMIT = 64 * 1024;
const CONSOLE_BODY_FACTOR = 24;

const REQUEST_ID = /^[\x20-\x7E]{1,128}$/;

/** Where the shop's and the operator's APIs live (the OpenAPI document is served on its own). */
const API_PATHS = /^\/(?:api\/v1\/stores|admin\/v1)(?:\/|$)/;

/** The console's and the docs' pages load only their own files (Swagger UI styles some elements inline). */
const PAGE_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
].join("; ");

/** The caller's X-Request-Id when it is printable ASCII of at most 128 chars, else a new one. */
function requestIdOf(req: Request): string {
  const given = req.headers["x-request-id"];
  return typeof given === "string" && REQUEST_ID.test(given) ? given : crypto.randomUUID();
}

/** RFC 7240: `Prefer: handling=strict` among the request's preferences. */
function prefersStrict(header: string | string[] | undefined): boolean {
  const values = Array.isArray(header) ? header.join(",") : (header ?? "");
  return values.split(",").some((preference) => preference.trim().toLowerCase().replace(/\s+/g, "") === "handling=strict");
}

/**
 * Any `X-Backfill` value but "false" or "0" marks a push as historical: a
 * mistyped "ture" must never message a shop's whole customer history.
 */
function isBackfill(header: string | string[] | undefined): boolean {
  if (header === undefined) return false;
  const value = (Array.isArray(header) ? header.join(",") : header).trim().toLowerCase();
  return value !== "false" && value !== "0";
}

/** A streamed upload (an import's file): it may take as long as it needs while bytes keep coming fast enough. */
const isUpload = (req: Pick<http.IncomingMessage, "method" | "url">) => req.method === "POST" && /^\/api\/v1\/stores\/[^/]+\/imports\/?(?:\?|$)/.test(req.url ?? "");

/**
 * A body must arrive whole within `ms` of its headers (a body that trickles is
 * answered 408 and its connection closed, as Node's own request timeout
 * would). An upload is paced by its reader instead (see `paced`): it may take
 * as long as its file needs while it keeps coming, and is answered 408 itself
 * when it falls silent or trickles.
 */
function boundBody(req: Request, ms: number): void {
  if (req.complete || isUpload(req)) return;
  const timer = setTimeout(() => {
    if (req.complete) return;
    const error: NodeJS.ErrnoException = new Error("request body timeout");
    error.code = "ERR_HTTP_REQUEST_TIMEOUT";
    answerProtocolError(error, req.socket);
  }, ms);
  // One listener: a request closes once it has ended and been answered, or with its connection.
  req.once("close", () => clearTimeout(timer));
}

/** What the app needs beyond what its requests see: where API calls are kept for the console, and the metrics. */
export type AppServices = Services & {
  /** Recent API calls per store, for the console; absent where nothing keeps them. */
  requestLog?: RequestLog;
  /** Prometheus metrics at /metrics; absent where nothing scrapes them. */
  metrics?: Metrics;
  /** The live API calls imports yield to; absent where this process runs no import. */
  live?: LiveTraffic;
};

/** The `external_id` a body names, when it names one that fits a key (at most 255 characters). */
function bodyKey(body: unknown): string | null {
  const key = externalIdOf(body);
  return key !== null && key.length <= 255 ? key : null;
}

/** A path under a store: its id (as sent). */
const STORE_PATH = /^\/api\/v1\/stores\/([^/]+)(?:\/|$)/;
/** The route of a call that matched none (the metrics' label too). */
const UNMATCHED = "(unmatched)";

/** How much of a call's bodies the request log keeps: a refusal's whole (to its details), a success's beginning. */
const REFUSED_BODY_CHARS = 16 * 1024;
const KEPT_BODY_CHARS = 4 * 1024;

/** An import's own calls (its upload, its progress read) are not live traffic it should yield to. */
const IMPORT_PATHS = /^\/api\/v1\/stores\/[^/]+\/imports(?:\/|$)/;

export function createApp(services: AppServices, options: AppOptions): express.Express {
  /**
   * An API call goes to its store's request log (no key value; bodies masked) when it was authorized for the
   * store, or refused with a key of the store's own team (restricted to another store, deleted, rate limited;
   * or before any procedure ran: a body too large, an unknown path or method under the store).
   */
  function recordForStore(req: Request, res: Response, latencyMs: number): void {
    if (!services.requestLog) return;
    const context = res.locals.context as Context | undefined;
    const authorized = context?.response.authorized ?? context?.response.caller;
    if (authorized) return writeEntry(req, res, latencyMs, authorized);
    // A key no team has, on a store's path: counted for the store by its first characters, never kept.
    if (res.locals.errorCode === "invalid_api_key") return countUnknownKey(req);
    const store = context || res.statusCode < 400 ? undefined : STORE_PATH.exec(req.path)?.[1];
    if (store === undefined) return;
    callerOf(services, req.headers.authorization, store).then(
      (caller) => caller && writeEntry(req, res, latencyMs, caller),
      (error: unknown) => services.logger.warn({ err: errorForLog(error) }, "could not tell whose call was refused"),
    );
  }

  function countUnknownKey(req: Request): void {
    const storeId = parseStoreId(STORE_PATH.exec(req.path)?.[1] ?? "");
    const token = req.headers.authorization === undefined ? undefined : bearerToken(req.headers.authorization);
    if (storeId === undefined || token === undefined) return;
    services.requestLog?.unknownKey(storeId, looksLikeApiKey(token) ? token.slice(0, UNKNOWN_KEY_PREFIX) : "(not a key)");
  }

  function writeEntry(req: Request, res: Response, latencyMs: number, authorized: { storeId: number; keyId: number }): void {
    if (!services.requestLog) return;
    const context = res.locals.context as Context | undefined;
    // Refused calls keep their bodies always; others unless their store says not to, and shorter.
    const refused = res.statusCode >= 400;
    const cap = refused ? REFUSED_BODY_CHARS : KEPT_BODY_CHARS;
    const keep = refused || (context?.response.authorized?.logBodies ?? true);
    const { requestBody, responseBody } = res.locals as { requestBody?: unknown; responseBody?: unknown };
    const bodies = keep ? { request: requestBody, response: responseBody, chars: cap } : undefined;
    services.requestLog.record({
      path: req.originalUrl,
      code: typeof res.locals.errorCode === "string" ? res.locals.errorCode : null,
      store_id: authorized.storeId,
      key_id: authorized.keyId,
      created_at: new Date(),
      method: req.method,
      route: typeof res.locals.route === "string" ? res.locals.route : UNMATCHED,
      status: res.statusCode,
      error: typeof res.locals.errorMessage === "string" ? res.locals.errorMessage : null,
      request_id: String(res.locals.requestId),
      latency_ms: latencyMs,
      record_kind: context?.response.record?.kind ?? null,
      // A refused write names its record by its body's key, so the log can be searched by it.
      record_external_id: context?.response.record?.externalId ?? bodyKey(requestBody),
      details: Array.isArray(res.locals.errorDetails) ? storableJson(res.locals.errorDetails) : null,
    }, bodies);
  }

  const app = express();
  app.disable("x-powered-by");
  app.set("etag", false);
  app.set("query parser", "simple");

  const bodyTimeoutMs = options.bodyTimeoutMs ?? DEFAULT_CONNECTION_LIMITS.requestTimeoutMs;
  app.use((req, res, next) => {
    boundBody(req, bodyTimeoutMs);
    const requestId = requestIdOf(req);
    res.locals.requestId = requestId;
    res.setHeader("X-Request-Id", requestId);
    const started = process.hrtime.bigint();
    const live = services.live && API_PATHS.test(req.path) && !IMPORT_PATHS.test(req.path) ? services.live : undefined;
    if (live) {
      live.inFlight++;
      live.lastSeen = performance.now();
    }
    // A call is accounted once its answer is out: at `finish`, or at `close` when the client's reset of the
    // socket kept `finish` from coming (a 413 answered while its body was still arriving, say).
    let accounted = false;
    const account = () => {
      if (accounted) return;
      accounted = true;
      if (req.method !== "GET" && res.statusCode < 300) services.afterWrite?.();
      const latencyMs = Number((process.hrtime.bigint() - started) / 1000n) / 1000;
      recordForStore(req, res, latencyMs);
      // Unmatched paths share one label: a scanner's thousand paths must not become a thousand series.
      const labels = { route: typeof res.locals.route === "string" ? res.locals.route : UNMATCHED, method: req.method };
      services.metrics?.requests.inc({ ...labels, status: String(res.statusCode) });
      services.metrics?.latency.observe(labels, latencyMs / 1000);
      // The route template, not the path: a path can carry a phone number, which logs must not keep.
      const route = typeof res.locals.route === "string" ? res.locals.route : undefined;
      services.logger.info(
        { requestId, method: req.method, path: route ?? pathForLog(req.path), status: res.statusCode, latencyMs },
        "request",
      );
    };
    res.on("finish", account);
    res.on("close", () => {
      if (live) {
        live.inFlight = Math.max(0, live.inFlight - 1);
        live.lastSeen = performance.now();
      }
      if (res.headersSent) account();
    });
    next();
  });

  // A body declared over the limit is refused before a byte of it is read; the connection closes once the client
  // has sent the rest, or after a short linger (see `refuseTooLarge`): a client that claims megabytes holds nothing.
  app.use((req, res, next) => {
    const declared = Number(req.headers["content-length"] ?? 0);
    // An import's upload is streamed to its procedure, never buffered, with a size limit of its own.
    if (!(declared > options.bodyLimitBytes) || isUpload(req)) return next();
    refuseTooLarge(req, res);
  });

  // Every body the service reads takes its share of the process's budget before a byte of it is read.
  const bodies = bodyBudget(options.bodyMemoryBytes ?? 128 * 1024 * 1024);
  app.use((req, res, next) => {
    const hasBody = req.headers["transfer-encoding"] !== undefined || Number(req.headers["content-length"] ?? 0) > 0;
    if (!hasBody || isUpload(req)) return next();
    const declared = Number(req.headers["content-length"] ?? Number.POSITIVE_INFINITY);
    const share = API_PATHS.test(req.path)
      ? Math.min(declared, options.bodyLimitBytes)
      : req.path.startsWith(CONSOLE_API_PREFIX)
        ? Math.min(declared, CONSOLE_BODY_LIMIT) * CONSOLE_BODY_FACTOR
        : 0; // never read: dropped as it comes
    if (bodies.hold(res, share)) return next();
    lingerAfterAnswer(req);
    sendErrorCode(res, "SERVER_BUSY", { "Retry-After": "1" });
  });

  app.use((req, res, next) => {
    // A push stored as history says so, so it never passes unnoticed.
    if (isBackfill(req.headers["x-backfill"])) res.setHeader("X-Backfill", "true");
    if (prefersStrict(req.headers.prefer)) res.setHeader("Preference-Applied", "handling=strict");
    res.setHeader("X-Content-Type-Options", "nosniff");
    res.setHeader("Referrer-Policy", "no-referrer");
    res.setHeader("X-Frame-Options", "DENY");
    // API answers are per caller and per moment: never stored by a cache on the way.
    if (/^\/(api|admin|console\/trpc)(\/|$)/.test(req.path)) res.setHeader("Cache-Control", "no-store");
    else res.setHeader("Content-Security-Policy", PAGE_POLICY);
    next();
  });

  app.get("/healthz", (_req, res) => {
    res.json({ status: "ok" });
  });
  app.get("/readyz", async (_req, res) => {
    try {
      await sql`select 1`.execute(services.db);
      res.json({ status: "ready" });
    } catch {
      sendErrorCode(res, "SERVICE_UNAVAILABLE", { "Retry-After": "5" });
    }
  });

  app.get("/metrics", async (req, res) => {
    res.locals.route = "/metrics";
    const metrics = services.metrics;
    if (!metrics || (!services.adminRemote && !isLocalAddress(req.socket.remoteAddress))) return sendErrorCode(res, "NOT_FOUND");
    const authorization = req.headers.authorization;
    if (authorization === undefined) return sendErrorCode(res, "ADMIN_TOKEN_MISSING");
    const token = bearerToken(authorization);
    if (token === undefined || !secretsEqual(token, services.adminToken)) return sendErrorCode(res, "ADMIN_TOKEN_INVALID");
    res.setHeader("Cache-Control", "no-store");
    res.type(metrics.registry.contentType).send(await metrics.registry.metrics());
  });

  const openApiDocument = buildOpenApiDocument(appRouter, { rateLimit: services.rateLimiter.limits, bodyLimitBytes: options.bodyLimitBytes });
  app.get("/api/v1/openapi.json", (_req, res) => {
    res.json(openApiDocument);
  });
  // Any body is buffered (up to the limit, 413 past it, before authentication so a huge body is never read);
  // JSON parsing waits until the procedure has authorized the caller.
  const api = express.Router();
  const raw = express.raw({ type: () => true, limit: options.bodyLimitBytes });
  api.use((req, res, next) => (isUpload(req) ? next() : raw(req, res, next)));
  api.use(
    createRestRouter({
      appRouter,
      deadlineMs: options.requestDeadlineMs ?? 15_000,
      bodies,
      // The request's context, as tests and the console build theirs.
      createContext: (req, res, body): Context => {
        const idempotency = body.upload ? undefined : idempotencyRequestOf(req.headers["idempotency-key"], req.method, req.path, req.body);
        return createContextInner(services, {
          requestId: String(res.locals.requestId),
          authorization: req.headers.authorization,
          address: req.socket.remoteAddress,
          bodyProblem: body.problem,
          rawBody: body.value,
          backfill: isBackfill(req.headers["x-backfill"]),
          strict: prefersStrict(req.headers.prefer),
          idempotency,
          upload: body.upload,
        });
      },
      onUnexpectedError: (error, req, res) => {
        const level = isDatabaseUnavailable(error) ? "warn" : "error";
        services.logger[level]({ requestId: res.locals.requestId, err: errorForLog(error), method: req.method }, "request failed");
      },
    }),
  );
  // The shop's and the operator's APIs come before the docs, the console and its pages, which serve none of
  // their paths: a push passes none of their layers, and a GET of a record looks for no file first.
  app.use((req, res, next) => (API_PATHS.test(req.path) ? api(req, res, next) : next()));

  app.use(createDocsRouter());
  app.use(CONSOLE_API_PREFIX, createConsoleApi(services));
  app.use(LIVE_PREFIX, createLiveView(services));
  const pages = options.consoleDir ? createConsolePages(options.consoleDir) : undefined;
  if (pages) app.use(pages);
  // The service's own paths answer other methods like the API's do: 405 with Allow.
  for (const path of ["/healthz", "/readyz", "/metrics", "/api/v1/openapi.json", "/docs"]) {
    app.all(path, (req, res, next) => (req.method === "GET" || req.method === "HEAD" ? next() : sendErrorCode(res, "METHOD_NOT_ALLOWED", { Allow: "GET, HEAD" })));
  }

  app.use((_req, res) => {
    sendErrorCode(res, "NOT_FOUND");
  });

  app.use((error: unknown, req: Request, res: Response, _next: NextFunction) => {
    const type = typeof error === "object" && error !== null && "type" in error ? error.type : undefined;
    const status = typeof error === "object" && error !== null && "status" in error ? error.status : undefined;
    if (res.headersSent) return;
    if (type === "entity.too.large") return refuseTooLarge(req, res);
    if (type === "encoding.unsupported" || type === "charset.unsupported") return sendErrorCode(res, "UNSUPPORTED_MEDIA_TYPE");
    if (type === "request.aborted" || type === "request.size.invalid") return sendErrorCode(res, "MALFORMED_JSON");
    // A path whose percent-encoding cannot be decoded names nothing here.
    if (error instanceof URIError) return sendErrorCode(res, "NOT_FOUND");
    // Any other 400 from reading the body (a broken gzip or deflate stream, say) is a body that cannot be parsed.
    if (status === 400) return sendErrorCode(res, "MALFORMED_JSON");
    services.logger.error({ requestId: res.locals.requestId, err: errorForLog(error), method: req.method }, "request failed");
    sendErrorCode(res, "INTERNAL");
  });

  return app;
}
