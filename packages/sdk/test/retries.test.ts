import { describe, expect, it, vi } from "vitest";
import { ERRORS } from "@commerce-ingest/shared/errors";
import { AbortError, CommerceIngestClient, ERROR_CODES, type RequestEvent, type ResponseEvent, RateLimitError, ServerError, TimeoutError, ValidationError, type ClientOptions, type RetryInfo } from "../src/index.js";

type Call = { url: string; init: RequestInit };

/** A fetch that answers from a script, one entry per call; "hang" never answers (until aborted). */
function scriptedFetch(script: Array<{ status: number; body?: unknown; headers?: Record<string, string> } | "hang" | "network">) {
  const calls: Call[] = [];
  const fetchImpl: typeof fetch = async (input, init = {}) => {
    calls.push({ url: input instanceof Request ? input.url : String(input), init });
    const step = script[Math.min(calls.length - 1, script.length - 1)];
    if (step === "network") throw new TypeError("fetch failed");
    if (step === "hang" || step === undefined) {
      return new Promise<Response>((_, reject) => {
        init.signal?.addEventListener("abort", () => reject(new DOMException("aborted", "AbortError")));
      });
    }
    return new Response(step.body === undefined ? null : JSON.stringify(step.body), {
      status: step.status,
      headers: { "Content-Type": "application/json", ...step.headers },
    });
  };
  return { fetch: fetchImpl, calls };
}

const customer = { phone: "+14155552671" };
const ok = { status: 200, body: { external_id: "+14155552671" } };
const client = (fetchImpl: typeof fetch, options: ClientOptions = {}) =>
  new CommerceIngestClient({ apiKey: "k".repeat(24), baseUrl: "http://api.test", fetch: fetchImpl, logLevel: "off", ...options });

/** A logger that keeps what it is given. */
function recordingLogger() {
  const lines: Array<{ level: string; message: string; fields: Record<string, unknown> | undefined }> = [];
  const at = (level: string) => (message: string, fields?: Record<string, unknown>) => void lines.push({ level, message, fields });
  return { lines, logger: { debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") } };
}

describe("retries", () => {
  it("waits the Retry-After of a 429, then succeeds", async () => {
    const scripted = scriptedFetch([{ status: 429, body: { error: "Rate limit exceeded" }, headers: { "Retry-After": "1" } }, ok]);
    const started = Date.now();
    const result = await client(scripted.fetch).customers.upsert(1, customer);
    expect(result.status).toBe(200);
    expect(scripted.calls).toHaveLength(2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
  });

  it("does not sit out a Retry-After longer than a minute: the RateLimitError comes at once", async () => {
    const scripted = scriptedFetch([{ status: 429, body: { error: "Rate limit exceeded" }, headers: { "Retry-After": "3600" } }, ok]);
    const error = await client(scripted.fetch).customers.upsert(1, customer).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitError);
    expect((error as RateLimitError).retryAfter).toBe(3600);
    expect(scripted.calls).toHaveLength(1);
  });

  it("retries a 503 and then succeeds, with the same request id on every attempt", async () => {
    const scripted = scriptedFetch([{ status: 503, body: { error: "Service unavailable" }, headers: { "Retry-After": "0" } }, ok]);
    const result = await client(scripted.fetch).customers.upsert(1, customer);
    expect(result.status).toBe(200);
    const ids = scripted.calls.map((call) => new Headers(call.init.headers).get("x-request-id"));
    expect(ids).toHaveLength(2);
    expect(ids[0]).toBe(ids[1]);
    expect(result.requestId).toBe(ids[0]);
  });

  it("gives up after maxRetries with the last ServerError", async () => {
    const scripted = scriptedFetch([{ status: 500, body: { error: "Internal server error" }, headers: { "Retry-After": "0" } }]);
    const error = await client(scripted.fetch, { maxRetries: 2 }).customers.upsert(1, customer).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServerError);
    expect(scripted.calls).toHaveLength(3);
  });

  it("retries network errors with backoff", async () => {
    const scripted = scriptedFetch(["network", ok]);
    expect((await client(scripted.fetch).customers.upsert(1, customer)).status).toBe(200);
    expect(scripted.calls).toHaveLength(2);
  });

  it("times out a hanging request, retries it, and ends with a TimeoutError", async () => {
    const scripted = scriptedFetch(["hang"]);
    const error = await client(scripted.fetch, { timeout: 100, maxRetries: 1 }).customers.upsert(1, customer).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TimeoutError);
    expect(scripted.calls).toHaveLength(2);
  });

  it("never retries a 422", async () => {
    const scripted = scriptedFetch([{ status: 422, body: { error: "Invalid request body", details: [{ path: "phone", message: "is required" }] } }, ok]);
    const error = await client(scripted.fetch).customers.upsert(1, customer).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).details).toEqual([{ path: "phone", message: "is required" }]);
    expect(scripted.calls).toHaveLength(1);
  });

  it("stops at once when the caller's signal aborts", async () => {
    const scripted = scriptedFetch(["hang"]);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const error = await client(scripted.fetch, { timeout: 10_000 }).customers.upsert(1, customer, { signal: controller.signal }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AbortError);
    expect(scripted.calls).toHaveLength(1);
  });

  it("sends the key, JSON, the backfill header, and percent-encodes external ids", async () => {
    const scripted = scriptedFetch([ok]);
    await client(scripted.fetch).orders.update(7, "a/b c?#%ü", { financial_status: "paid" }, { backfill: true });
    const [call] = scripted.calls;
    expect(call?.url).toBe("http://api.test/api/v1/stores/7/orders/a%2Fb%20c%3F%23%25%C3%BC");
    const headers = new Headers(call?.init.headers);
    expect(headers.get("authorization")).toBe(`Bearer ${"k".repeat(24)}`);
    expect(headers.get("content-type")).toBe("application/json");
    expect(headers.get("x-backfill")).toBe("true");
    expect(call?.init.method).toBe("PATCH");
    expect(JSON.parse(typeof call?.init.body === "string" ? call.init.body : "")).toEqual({ financial_status: "paid" });
  });

  it("reads the key and URL from the environment", () => {
    process.env.COMMERCE_INGEST_API_KEY = "e".repeat(24);
    process.env.COMMERCE_INGEST_BASE_URL = "http://env.test/";
    try {
      const fromEnv = new CommerceIngestClient();
      expect(fromEnv.baseUrl).toBe("http://env.test");
    } finally {
      delete process.env.COMMERCE_INGEST_API_KEY;
      delete process.env.COMMERCE_INGEST_BASE_URL;
    }
    expect(() => new CommerceIngestClient()).toThrow(/No API key/);
  });
});

describe("what the client tells", () => {
  it("calls onRetry before each wait, with the status and the wait", async () => {
    const scripted = scriptedFetch([{ status: 429, body: { error: "Rate limit exceeded" }, headers: { "Retry-After": "0" } }, { status: 503, body: { error: "Service unavailable" }, headers: { "Retry-After": "0" } }, ok]);
    const retries: RetryInfo[] = [];
    await client(scripted.fetch, { onRetry: (info) => retries.push(info) }).customers.upsert(1, customer, { requestId: "req-1" });
    expect(retries.map(({ retry, status, waitMs, requestId, method, path, error }) => ({ retry, status, waitMs, requestId, method, path, error: error.name }))).toEqual([
      { retry: 1, status: 429, waitMs: 0, requestId: "req-1", method: "POST", path: "/api/v1/stores/1/customers", error: "RateLimitError" },
      { retry: 2, status: 503, waitMs: 0, requestId: "req-1", method: "POST", path: "/api/v1/stores/1/customers", error: "ServerError" },
    ]);
  });

  it("logs each request and answer at debug, each retry and its wait at warn, and nothing below its level", async () => {
    const scripted = scriptedFetch([{ status: 503, body: { error: "Service unavailable" }, headers: { "Retry-After": "0" } }, ok]);
    const debug = recordingLogger();
    await client(scripted.fetch, { logLevel: "debug", logger: debug.logger }).customers.upsert(1, customer, { requestId: "req-2" });
    expect(debug.lines.map(({ level, message, fields }) => [level, message, fields?.status ?? fields?.attempt, fields?.waitMs])).toEqual([
      ["debug", "commerce-ingest: request", 1, undefined],
      ["debug", "commerce-ingest: response", 503, undefined],
      ["warn", "commerce-ingest: retrying", 503, 0],
      ["debug", "commerce-ingest: request", 2, undefined],
      ["debug", "commerce-ingest: response", 200, undefined],
    ]);
    const quiet = recordingLogger();
    await client(scriptedFetch([ok]).fetch, { logLevel: "warn", logger: quiet.logger }).customers.upsert(1, customer);
    expect(quiet.lines).toEqual([]);
  });

  it("takes its log level from COMMERCE_INGEST_LOG", async () => {
    const previous = process.env.COMMERCE_INGEST_LOG;
    process.env.COMMERCE_INGEST_LOG = "debug";
    try {
      const recorded = recordingLogger();
      const viaEnv = new CommerceIngestClient({ apiKey: "k".repeat(24), baseUrl: "http://api.test", fetch: scriptedFetch([ok]).fetch, logger: recorded.logger });
      await viaEnv.customers.upsert(1, customer);
      expect(recorded.lines.map((line) => line.level)).toEqual(["debug", "debug"]);
    } finally {
      if (previous === undefined) delete process.env.COMMERCE_INGEST_LOG;
      else process.env.COMMERCE_INGEST_LOG = previous;
    }
  });

  it("sends one Idempotency-Key per write, the same on its retries, none on reads; strict unless told otherwise", async () => {
    const scripted = scriptedFetch([{ status: 503, body: { error: "Service unavailable" }, headers: { "Retry-After": "0" } }, ok]);
    const c = client(scripted.fetch);
    await c.customers.upsert(1, customer);
    await c.customers.upsert(1, customer, { idempotencyKey: "mine-1", strict: false });
    await c.orders.retrieve(1, "o1");
    const sent = scripted.calls.map((call) => new Headers(call.init.headers));
    const keys = sent.map((headers) => headers.get("idempotency-key"));
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[1]).toBe(keys[0]);
    expect(keys.slice(2)).toEqual(["mine-1", null]);
    expect(sent.map((headers) => headers.get("prefer"))).toEqual(["handling=strict", "handling=strict", null, null]);
  });

  it("exposes the contract's code and a typed body, also for a body that is not the API's", async () => {
    const proxy = scriptedFetch([{ status: 502, body: "<html>Bad gateway</html>" }]);
    const error = await client(proxy.fetch, { maxRetries: 0 }).customers.upsert(1, customer).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServerError);
    expect(error).toMatchObject({ code: "unexpected_response", body: { error: "HTTP 502" }, details: [] });
  });
});

describe("deprecations", () => {
  it("an answer that says its call is deprecated is logged once per call, with its sunset", async () => {
    const deprecated = { status: 200, body: { external_id: "+14155552671" }, headers: { Deprecation: "@1798761600", Sunset: "Sat, 01 Jan 2028 00:00:00 GMT", Link: '<https://example.test/migrate>; rel="deprecation"' } };
    const { lines, logger } = recordingLogger();
    const scripted = scriptedFetch([deprecated]);
    const api = client(scripted.fetch, { logLevel: "warn", logger });
    for (const store of [1, 2, 3]) await api.customers.upsert(store, customer);
    const warnings = lines.filter((line) => line.message === "commerce-ingest: this call is deprecated");
    expect(warnings).toEqual([
      { level: "warn", message: "commerce-ingest: this call is deprecated", fields: { call: "POST /api/v1/stores/{store_id}/customers", deprecation: "@1798761600", sunset: "Sat, 01 Jan 2028 00:00:00 GMT", link: '<https://example.test/migrate>; rel="deprecation"' } },
    ]);
  });
});

describe("error codes", () => {
  it("are the service's error table's, each with its status, message and retry, nothing more or less", () => {
    const table = Object.fromEntries(Object.values(ERRORS).map(({ code, status, message, retry }) => [code, { status, message, retry }]));
    expect(ERROR_CODES).toEqual(table);
  });

  it("come through as the body sent them, one this SDK does not know too", async () => {
    const { fetch } = scriptedFetch([{ status: 409, body: { error: "Something new", code: "brand_new_code" } }]);
    await expect(client(fetch, { maxRetries: 0 }).customers.upsert(1, customer)).rejects.toMatchObject({ status: 409, code: "brand_new_code", message: "Something new" });
  });

  it("are the SDK's own where no body named one: a timeout, a connection that failed", async () => {
    await expect(client(scriptedFetch(["hang"]).fetch, { timeout: 50, maxRetries: 0 }).customers.upsert(1, customer)).rejects.toMatchObject({ name: "TimeoutError", code: "timeout" });
    await expect(client(scriptedFetch(["network"]).fetch, { maxRetries: 0 }).customers.upsert(1, customer)).rejects.toMatchObject({ name: "ConnectionError", code: "connection_failed" });
  });
});

describe("an import's upload", () => {
  it("goes uncompressed where the runtime has no CompressionStream, rather than failing", async () => {
    const global = globalThis as { CompressionStream?: unknown };
    const original = global.CompressionStream;
    delete global.CompressionStream;
    try {
      const { fetch, calls } = scriptedFetch([{ status: 202, body: { id: 7, store_id: 1, kind: "customers", status: "queued", lines: 1 } }]);
      const handle = await client(fetch).imports.create(1, { kind: "customers", records: [customer] });
      expect(handle.id).toBe(7);
      const init = calls[0]?.init ?? {};
      expect(new Headers(init.headers).get("content-encoding")).toBeNull();
      expect(await new Response(init.body).text()).toBe(`${JSON.stringify(customer)}\n`);
    } finally {
      global.CompressionStream = original;
    }
  });
});

describe("telemetry", () => {
  it("tells each attempt as it is sent and as it ends, with its status, time and error", async () => {
    const seen: Array<["request", RequestEvent] | ["response", ResponseEvent]> = [];
    const scripted = scriptedFetch([{ status: 503, body: { error: "Service unavailable", code: "service_unavailable" }, headers: { "Retry-After": "0" } }, ok]);
    await new CommerceIngestClient({
      apiKey: "k".repeat(24),
      baseUrl: "http://api.test",
      fetch: scripted.fetch,
      onRequest: (event) => seen.push(["request", event]),
      onResponse: (event) => seen.push(["response", event]),
    }).customers.upsert(1, customer, { requestId: "req-telemetry" });
    const call = { method: "POST", path: "/api/v1/stores/1/customers", requestId: "req-telemetry" };
    expect(seen).toEqual([
      ["request", { ...call, attempt: 1 }],
      ["response", { ...call, attempt: 1, status: 503, durationMs: expect.any(Number), error: expect.objectContaining({ code: "service_unavailable" }) }],
      ["request", { ...call, attempt: 2 }],
      ["response", { ...call, attempt: 2, status: 200, durationMs: expect.any(Number), error: undefined }],
    ]);
  });

  it("writes nothing to standard error unless given a logger or a level, retries included", async () => {
    const written = vi.spyOn(console, "error").mockImplementation(() => undefined);
    const retries: number[] = [];
    try {
      const scripted = scriptedFetch([{ status: 503, body: { error: "Service unavailable" }, headers: { "Retry-After": "0" } }, ok]);
      await new CommerceIngestClient({ apiKey: "k".repeat(24), baseUrl: "http://api.test", fetch: scripted.fetch, onRetry: ({ retry }) => retries.push(retry) }).customers.upsert(1, customer);
      expect(retries).toEqual([1]);
      expect(written).not.toHaveBeenCalled();
      // Asked for lines, with nowhere given for them: standard error.
      await new CommerceIngestClient({ apiKey: "k".repeat(24), baseUrl: "http://api.test", fetch: scriptedFetch([{ status: 503, body: { error: "Service unavailable" }, headers: { "Retry-After": "0" } }, ok]).fetch, logLevel: "warn" }).customers.upsert(1, customer);
      expect(written).toHaveBeenCalledWith("commerce-ingest: retrying", expect.objectContaining({ retry: 1 }));
    } finally {
      written.mockRestore();
    }
  });
});
