import { randomUUID } from "node:crypto";
import { AbortError, APIError, CommerceIngestError, ConnectionError, TimeoutError } from "./errors.js";
import { Checkouts, Customers, Orders, Shipments, bindStore, type StoreScope } from "./resources.js";

export const VERSION = "0.1.0";

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
};

export type RequestOptions = {
  /** Aborts the call (no retry follows). */
  signal?: AbortSignal | undefined;
  timeout?: number | undefined;
  maxRetries?: number | undefined;
  headers?: Record<string, string> | undefined;
  /** Sent as `X-Request-Id` (printable ASCII, at most 128 characters); generated when absent. */
  requestId?: string | undefined;
  /** Historical data: stored, but no automation is triggered (`X-Backfill: true`). */
  backfill?: boolean | undefined;
};

export type ApiResult<T> = {
  data: T;
  /** The HTTP status of the answer. */
  status: number;
  /** The request's `X-Request-Id`. */
  requestId: string;
};

export type UpsertResult<T> = ApiResult<T> & {
  /** True when the upsert created the record (201), false when it updated one (200). */
  created: boolean;
};

const MAX_RETRY_AFTER_SECONDS = 60;

function env(name: string): string | undefined {
  const value = typeof process === "undefined" ? undefined : process.env[name];
  return value === "" ? undefined : value;
}

function retryable(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

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
export class CommerceIngestClient {
  readonly orders: Orders;
  readonly customers: Customers;
  readonly checkouts: Checkouts;
  readonly shipments: Shipments;
  readonly baseUrl: string;
  readonly timeout: number;
  readonly maxRetries: number;
  readonly #apiKey: string;
  readonly #fetch: typeof fetch;
  readonly #defaultHeaders: Record<string, string>;

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
    this.orders = new Orders(this);
    this.customers = new Customers(this);
    this.checkouts = new Checkouts(this);
    this.shipments = new Shipments(this);
  }

  /** The same resources with the store given once: `client.store(42).orders.upsert(order)`. */
  store(storeId: number): StoreScope {
    return {
      storeId,
      orders: bindStore(this.orders, storeId),
      customers: bindStore(this.customers, storeId),
      checkouts: bindStore(this.checkouts, storeId),
      shipments: bindStore(this.shipments, storeId),
    };
  }

  /**
   * One API call with the client's resilience: a timeout per attempt, retries
   * with exponential backoff and jitter on network errors, timeouts, 408, 429
   * and 5xx (honouring `Retry-After`), never on other 4xx. Every upsert, PATCH
   * and DELETE of this API is idempotent, so a retry never duplicates.
   */
  async request<T>(method: string, path: string, body: unknown, options: RequestOptions = {}): Promise<ApiResult<T>> {
    const requestId = options.requestId ?? randomUUID();
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
    if (options.backfill) headers["X-Backfill"] = "true";
    const payload = body === undefined ? undefined : JSON.stringify(body);

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

      let failure: CommerceIngestError;
      let waitSeconds: number | undefined;
      try {
        const response = await this.#fetch(`${this.baseUrl}${path}`, { method, headers, body: payload, signal: controller.signal });
        const text = await response.text();
        const answeredId = response.headers.get("x-request-id") ?? requestId;
        let parsed: unknown = null;
        if (text) {
          try {
            parsed = JSON.parse(text);
          } catch {
            parsed = text;
          }
        }
        if (response.ok) return { data: parsed as T, status: response.status, requestId: answeredId };
        failure = APIError.from(response.status, parsed, response.headers, answeredId);
        if (!retryable(response.status)) throw failure;
        waitSeconds = retryAfterSeconds(response.headers);
        // Asked to wait longer than is sensible to block on: say so now, the caller decides.
        if (waitSeconds !== undefined && waitSeconds > MAX_RETRY_AFTER_SECONDS) throw failure;
      } catch (error) {
        if (error instanceof APIError) throw error;
        if (options.signal?.aborted) throw new AbortError("Request aborted", { cause: error });
        failure = timedOut
          ? new TimeoutError(`No answer within ${timeout} ms`, requestId, { cause: error })
          : new ConnectionError(`Could not reach ${this.baseUrl}: ${error instanceof Error ? error.message : String(error)}`, requestId, { cause: error });
      } finally {
        clearTimeout(timer);
        options.signal?.removeEventListener("abort", onAbort);
      }
      if (retry >= maxRetries) throw failure;
      await sleep((waitSeconds ?? backoffSeconds(retry)) * 1000, options.signal);
    }
  }
}
