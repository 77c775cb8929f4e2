import packageJson from "../package.json" with { type: "json" };
import { Imports } from "./imports.js";
import { AbortError, APIError, CommerceIngestError, ConnectionError, TimeoutError } from "./errors.js";
import { createLogger, parseLogLevel, type Logger, type LogLevel } from "./logger.js";
import { PushQueue, type QueueOptions } from "./queue.js";
import type { ApiResult, RequestOptions, Transport } from "./transport.js";
import { Checkouts, Customers, Orders, Shipments, bindStore, type StoreScope } from "./resources.js";

/** This SDK's version, from its package.json (sent in the User-Agent). */
export const VERSION: string = packageJson.version;

export type ClientOptions = {
  /** A 24-character API key. Defaults to the COMMERCE_INGEST_API_KEY environment variable. */
  apiKey?: string | undefined;
  /** The service's URL. Defaults to COMMERCE_INGEST_BASE_URL, then http://127.0.0.1:3000. */
  baseUrl?: string | undefined;
  /** Milliseconds before one attempt is abandoned (default 30000). */
  timeout?: number | undefined;
  /** Retries after the first attempt, for network errors, timeouts, 408, 429 and 5xx (default 2). */
  maxRetries?: number | undefined;
  /** A fetch implementation, for tests or proxies. Defaults to the global fetch. */
  fetch?: typeof fetch | undefined;
  /** Headers sent with every request. */
  defaultHeaders?: Record<string, string> | undefined;
  /**
   * Ask the API to refuse fields it does not know (`Prefer: handling=strict`): a typo such as
   * `financial_staus` is a `ValidationError` naming it instead of being ignored (default true).
   */
  strict?: boolean | undefined;
  /**
   * What the client logs: `"debug"` (every request, its answer and time), `"info"`, `"warn"` (retries
   * and their waits, ignored fields; the default once there is somewhere to log), `"error"` or `"off"`.
   * Defaults to COMMERCE_INGEST_LOG.
   */
  logLevel?: LogLevel | undefined;
  /**
   * Where log lines go: any object with debug/info/warn/error, e.g. pino. Without one the client
   * writes nothing, unless `logLevel` or COMMERCE_INGEST_LOG asks for lines: they then go to
   * standard error.
   */
  logger?: Logger | undefined;
  /** Called before each retry, with why and how long the client waits. */
  onRetry?: ((retry: RetryInfo) => void) | undefined;
  /** Called as each attempt of each call is sent: for tracing and metrics. */
  onRequest?: ((event: RequestEvent) => void) | undefined;
  /** Called as each attempt ends: answered (its status), or not (its error), and how long it took. */
  onResponse?: ((event: ResponseEvent) => void) | undefined;
};

/** An attempt of a call, as it is sent (`onRequest`). */
export type RequestEvent = {
  method: string;
  path: string;
  /** The call's `X-Request-Id`, the same on every attempt. */
  requestId: string;
  /** 1 for the first attempt, 2 for the first retry. */
  attempt: number;
};

/** An attempt of a call, once it ended (`onResponse`). */
export type ResponseEvent = RequestEvent & {
  /** The answer's status; undefined when none came (a network error, a timeout, an abort). */
  status: number | undefined;
  durationMs: number;
  /** What it failed with, when it did (an API error, a timeout...): its `code` says what. */
  error: CommerceIngestError | undefined;
};

/** What `onRetry` is told before the client waits and tries again. */
export type RetryInfo = {
  method: string;
  path: string;
  requestId: string;
  /** 1 for the first retry. */
  retry: number;
  /** Milliseconds the client waits before it (`Retry-After` when the API sent one). */
  waitMs: number;
  /** The status that caused it, or undefined for a network error or timeout. */
  status: number | undefined;
  /** The failure being retried. */
  error: CommerceIngestError;
};

const MAX_RETRY_AFTER_SECONDS = 60;

function env(name: string): string | undefined {
  const value = typeof process === "undefined" ? undefined : process.env[name];
  return value === "" ? undefined : value;
}

/** 409 is "the same Idempotency-Key is still running": worth waiting for. */
function retryable(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

const WRITES = new Set(["POST", "PATCH", "PUT", "DELETE"]);

/** Seconds the server asked us to wait, from `Retry-After` (seconds or an HTTP date). */
function retryAfterSeconds(headers: Headers): number | undefined {
  const value = headers.get("retry-after");
  if (value === null) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, (date - Date.now()) / 1000);
}

/** 0.5 s doubling to at most 8 s, with up to 25% jitter taken off. */
function backoffSeconds(retry: number): number {
  const delay = Math.min(0.5 * 2 ** retry, 8);
  return delay * (1 - Math.random() * 0.25);
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new AbortError("Request aborted"));
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(new AbortError("Request aborted"));
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * The client for the Commerce Data Ingestion API.
 *
 * ```ts
 * const client = new CommerceIngestClient({ apiKey: process.env.API_KEY });
 * const { data: order, created } = await client.orders.upsert(storeId, { ... });
 * ```
 */
export class CommerceIngestClient implements Transport {
  readonly orders: Orders;
  readonly customers: Customers;
  readonly checkouts: Checkouts;
  readonly shipments: Shipments;
  /** Bulk imports: a shop's history as one streamed file. */
  readonly imports: Imports;
  readonly baseUrl: string;
  readonly timeout: number;
  readonly maxRetries: number;
  readonly #apiKey: string;
  readonly #fetch: typeof fetch;
  readonly #defaultHeaders: Record<string, string>;
  readonly #strict: boolean;
  readonly #log: Logger;
  readonly #onRetry: ((retry: RetryInfo) => void) | undefined;
  readonly #onRequest: ((event: RequestEvent) => void) | undefined;
  readonly #onResponse: ((event: ResponseEvent) => void) | undefined;

  /** Tells the hooks of an attempt's end; a hook that throws never breaks the call. */
  #ended(event: RequestEvent, started: number, status: number | undefined, error: CommerceIngestError | undefined): void {
    try {
      this.#onResponse?.({ ...event, status, durationMs: Date.now() - started, error });
    } catch {
      // The caller's telemetry is not the call's business.
    }
  }

  #began(event: RequestEvent): void {
    try {
      this.#onRequest?.(event);
    } catch {
      // As above.
    }
  }

  constructor(options: ClientOptions = {}) {
    const apiKey = options.apiKey ?? env("COMMERCE_INGEST_API_KEY");
    if (!apiKey) {
      throw new CommerceIngestError("No API key: pass { apiKey } or set COMMERCE_INGEST_API_KEY.");
    }
    this.#apiKey = apiKey;
    this.baseUrl = (options.baseUrl ?? env("COMMERCE_INGEST_BASE_URL") ?? "http://127.0.0.1:3000").replace(/\/+$/, "");
    this.timeout = options.timeout ?? 30_000;
    this.maxRetries = options.maxRetries ?? 2;
    const fetchImpl = options.fetch ?? globalThis.fetch;
    if (typeof fetchImpl !== "function") throw new CommerceIngestError("No fetch available: use Node 18 or later, or pass { fetch }.");
    this.#fetch = fetchImpl;
    this.#defaultHeaders = options.defaultHeaders ?? {};
    this.#strict = options.strict ?? true;
    const level = options.logLevel ?? env("COMMERCE_INGEST_LOG");
    // Nothing is written anywhere unless asked: a logger given, or a level set.
    this.#log = options.logger || level !== undefined ? createLogger(parseLogLevel(level), options.logger) : createLogger("off");
    this.#onRetry = options.onRetry;
    this.#onRequest = options.onRequest;
    this.#onResponse = options.onResponse;
    this.orders = new Orders(this);
    this.customers = new Customers(this);
    this.checkouts = new Checkouts(this);
    this.shipments = new Shipments(this);
    this.imports = new Imports(this);
  }

  /** The same resources with the store given once: `client.store(42).orders.upsert(order)`. */
  /**
   * A queue that gathers single pushes into batch requests (see `PushQueue`):
   * `await queue.orders.push(order)` answers as `orders.upsert` would, at a
   * batch's cost. `flush()` or `close()` it before the program ends.
   */
  queue(storeId: number, options?: QueueOptions): PushQueue {
    return new PushQueue(this, storeId, options);
  }

  store(storeId: number): StoreScope {
    return {
      storeId,
      orders: bindStore(this.orders, storeId),
      customers: bindStore(this.customers, storeId),
      checkouts: bindStore(this.checkouts, storeId),
      shipments: bindStore(this.shipments, storeId),
      imports: bindStore(this.imports, storeId),
    };
  }

  /**
   * One API call with the client's resilience: a timeout per attempt, retries
   * with exponential backoff and jitter on network errors, timeouts, 408, 409,
   * 429 and 5xx (honouring `Retry-After`), never on other 4xx. Every write
   * carries an `Idempotency-Key` that its retries reuse, so a retry never
   * duplicates and answers as the first attempt did.
   */
  /** What this client has warned is deprecated: each call (method and path, ids left out) once. */
  readonly #deprecationsWarned = new Set<string>();

  /** An answer saying its call is deprecated (`Deprecation`, `Sunset`: see the API's versioning policy) is logged once per call. */
  #warnIfDeprecated(method: string, path: string, headers: Headers): void {
    const deprecation = headers.get("deprecation");
    if (deprecation === null) return;
    const call = `${method} ${(path.split("?")[0] ?? path).replace(/^(\/api\/v\d+\/stores\/)[^/]+/, "$1{store_id}").replace(/^(\/api\/v\d+\/stores\/\{store_id\}\/[a-z]+\/)(?!batch$)[^/]+$/, "$1{external_id}")}`;
    if (this.#deprecationsWarned.has(call)) return;
    this.#deprecationsWarned.add(call);
    this.#log.warn("commerce-ingest: this call is deprecated", { call, deprecation, sunset: headers.get("sunset") ?? undefined, link: headers.get("link") ?? undefined });
  }

  /**
   * One call whose body or answer is a stream (an import's file, its errors):
   * sent once, never retried (a stream cannot be sent twice), with no timeout
   * but `options.signal`. Answers the response when it is 2xx, else throws its
   * error as `request` does.
   */
  async send(method: string, path: string, init: { body?: ReadableStream<Uint8Array>; headers?: Record<string, string> }, options: RequestOptions = {}): Promise<Response> {
    const requestId = options.requestId ?? crypto.randomUUID();
    const headers: Record<string, string> = {
      "User-Agent": `commerce-ingest-sdk/${VERSION} node/${typeof process === "undefined" ? "unknown" : process.version}`,
      ...this.#defaultHeaders,
      ...options.headers,
      ...init.headers,
      Authorization: `Bearer ${this.#apiKey}`,
      "X-Request-Id": requestId,
    };
    const event = { method, path, requestId, attempt: 1 };
    const started = Date.now();
    this.#began(event);
    let response: Response;
    try {
      // `duplex`: a streamed body is sent as it is read (Node's fetch asks to be told).
      response = await this.#fetch(`${this.baseUrl}${path}`, { method, headers, body: init.body, signal: options.signal, ...(init.body ? { duplex: "half" } : {}) });
    } catch (error) {
      const failure = options.signal?.aborted
        ? new AbortError("Request aborted", { cause: error })
        : new ConnectionError(`Could not reach ${this.baseUrl}: ${error instanceof Error ? error.message : String(error)}`, requestId, { cause: error });
      this.#ended(event, started, undefined, failure);
      throw failure;
    }
    if (response.ok) {
      this.#ended(event, started, response.status, undefined);
      return response;
    }
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // Not JSON: the text itself.
    }
    const failure = APIError.from(response.status, parsed, response.headers, response.headers.get("x-request-id") ?? requestId);
    this.#ended(event, started, response.status, failure);
    throw failure;
  }

  async request<T>(method: string, path: string, body: unknown, options: RequestOptions = {}): Promise<ApiResult<T>> {
    const requestId = options.requestId ?? crypto.randomUUID();
    const maxRetries = options.maxRetries ?? this.maxRetries;
    const timeout = options.timeout ?? this.timeout;
    const headers: Record<string, string> = {
      Accept: "application/json",
      "User-Agent": `commerce-ingest-sdk/${VERSION} node/${typeof process === "undefined" ? "unknown" : process.version}`,
      ...this.#defaultHeaders,
      ...options.headers,
      Authorization: `Bearer ${this.#apiKey}`,
      "X-Request-Id": requestId,
    };
    if (body !== undefined) headers["Content-Type"] = "application/json";
    if (body !== undefined && (options.strict ?? this.#strict)) headers.Prefer = "handling=strict";
    if (options.backfill) headers["X-Backfill"] = "true";
    if (WRITES.has(method.toUpperCase())) headers["Idempotency-Key"] = options.idempotencyKey ?? crypto.randomUUID();
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const call = { method, path, requestId };

    for (let retry = 0; ; retry++) {
      if (options.signal?.aborted) throw new AbortError("Request aborted");
      const controller = new AbortController();
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        controller.abort();
      }, timeout);
      const onAbort = () => controller.abort();
      options.signal?.addEventListener("abort", onAbort, { once: true });
      const started = Date.now();
      const event = { ...call, attempt: retry + 1 };
      this.#log.debug("commerce-ingest: request", event);
      this.#began(event);

      let failure: CommerceIngestError;
      let status: number | undefined;
      let waitSeconds: number | undefined;
      try {
        const response = await this.#fetch(`${this.baseUrl}${path}`, { method, headers, body: payload, signal: controller.signal });
        const text = await response.text();
        const answeredId = response.headers.get("x-request-id") ?? requestId;
        status = response.status;
        this.#log.debug("commerce-ingest: response", { ...call, status, ms: Date.now() - started });
        this.#warnIfDeprecated(method, path, response.headers);
        let parsed: unknown = null;
        if (text) {
          try {
            parsed = JSON.parse(text);
          } catch {
            parsed = text;
          }
        }
        if (response.ok) {
          const ignoredFields = (response.headers.get("x-ignored-fields") ?? "").split(",").map((field) => field.trim()).filter(Boolean);
          if (ignoredFields.length > 0) this.#log.warn("commerce-ingest: fields ignored by the API", { ...call, ignoredFields });
          this.#ended(event, started, status, undefined);
          return { data: parsed as T, status: response.status, requestId: answeredId, headers: response.headers, ignoredFields };
        }
        failure = APIError.from(response.status, parsed, response.headers, answeredId);
        this.#ended(event, started, status, failure);
        if (!retryable(response.status)) throw failure;
        waitSeconds = retryAfterSeconds(response.headers);
        // Asked to wait longer than is sensible to block on: say so now, the caller decides.
        if (waitSeconds !== undefined && waitSeconds > MAX_RETRY_AFTER_SECONDS) throw failure;
      } catch (error) {
        if (error instanceof APIError) throw error;
        if (options.signal?.aborted) {
          const aborted = new AbortError("Request aborted", { cause: error });
          this.#ended(event, started, undefined, aborted);
          throw aborted;
        }
        failure = timedOut
          ? new TimeoutError(`No answer within ${timeout} ms`, requestId, { cause: error })
          : new ConnectionError(`Could not reach ${this.baseUrl}: ${error instanceof Error ? error.message : String(error)}`, requestId, { cause: error });
        this.#ended(event, started, undefined, failure);
      } finally {
        clearTimeout(timer);
        options.signal?.removeEventListener("abort", onAbort);
      }
      if (retry >= maxRetries) {
        this.#log.info("commerce-ingest: giving up", { ...call, attempts: retry + 1, status, error: failure.message });
        throw failure;
      }
      const waitMs = Math.round((waitSeconds ?? backoffSeconds(retry)) * 1000);
      this.#log.warn("commerce-ingest: retrying", { ...call, retry: retry + 1, status, error: failure.message, waitMs });
      this.#onRetry?.({ ...call, retry: retry + 1, waitMs, status, error: failure });
      await sleep(waitMs, options.signal);
    }
  }
}
