import { ERRORS } from "@commerce-ingest/shared/errors";
import type { ErrorBody, ErrorCode, ErrorDetail } from "./types.js";

/**
 * The error's code: from the code the body carries, which never changes; from
 * the contract's message at the status for a server older than codes; or
 * `"UNKNOWN"` for an answer that is neither (a proxy's 502 page, say).
 */
function codeOf(status: number, body: ErrorBody): ErrorCode | "UNKNOWN" {
  const table: Record<string, { status: number; message: string; code: string }> = ERRORS;
  const entries = Object.entries(table);
  const byWire = body.code === undefined ? undefined : entries.find(([, entry]) => entry.code === body.code);
  if (byWire) return byWire[0] as ErrorCode;
  if (body.code !== undefined) return "UNKNOWN";
  const byMessage = entries.find(([, entry]) => entry.status === status && entry.message === body.error);
  return byMessage ? (byMessage[0] as ErrorCode) : "UNKNOWN";
}

/** The body as the API's `{ error, code, details? }`, whatever came (an HTML error page becomes `{ error: "HTTP 502" }`). */
function errorBodyOf(status: number, body: unknown): ErrorBody {
  if (typeof body !== "object" || body === null || !("error" in body) || typeof body.error !== "string") return { error: `HTTP ${status}` };
  const details = "details" in body && Array.isArray(body.details) ? (body.details as ErrorDetail[]) : undefined;
  const code = "code" in body && typeof body.code === "string" ? body.code : undefined;
  return { error: body.error, ...(code === undefined ? {} : { code }), ...(details ? { details } : {}) };
}

/** Everything this SDK throws extends this class. */
export class CommerceIngestError extends Error {
  override readonly name: string = "CommerceIngestError";
}

/**
 * The API answered with an error status. Tell errors apart by `code` (stable),
 * or by class (one per status); `message` is the contract's exact text.
 */
export class APIError extends CommerceIngestError {
  override readonly name: string = "APIError";
  /**
   * The contract's code for this answer, e.g. `"STORE_NOT_FOUND"` vs
   * `"ORDER_NOT_FOUND"` (both 404), read from the code the body carries
   * (`body.code`, e.g. `"store_not_found"`), so a reworded message changes nothing.
   */
  readonly code: ErrorCode | "UNKNOWN";
  /** The error body: `{ error, details? }`. */
  readonly body: ErrorBody;

  constructor(
    /** The HTTP status. */
    readonly status: number,
    /** The API's message, e.g. "Invalid API key". */
    message: string,
    /** The request's `X-Request-Id`: quote it when asking for support. */
    readonly requestId: string,
    body: unknown,
    /** The response's headers (`Retry-After`, `RateLimit-*`, ...). */
    readonly headers: Headers,
  ) {
    super(message);
    this.body = errorBodyOf(status, body);
    this.code = codeOf(status, this.body);
  }

  /** On a 422: one entry per failing field, by its dotted path; empty otherwise. */
  get details(): ErrorDetail[] {
    return this.body.details ?? [];
  }

  /** The subclass that matches the status. */
  static from(status: number, body: unknown, headers: Headers, requestId: string): APIError {
    const message = errorBodyOf(status, body).error;
    if (status === 400) return new BadRequestError(status, message, requestId, body, headers);
    if (status === 401) return new AuthenticationError(status, message, requestId, body, headers);
    if (status === 403) return new PermissionDeniedError(status, message, requestId, body, headers);
    if (status === 404) return new NotFoundError(status, message, requestId, body, headers);
    if (status === 413) return new PayloadTooLargeError(status, message, requestId, body, headers);
    if (status === 409) return new ConflictError(status, message, requestId, body, headers);
    if (status === 415) return new UnsupportedMediaTypeError(status, message, requestId, body, headers);
    if (status === 422) return new ValidationError(status, message, requestId, body, headers);
    if (status === 429) return new RateLimitError(status, message, requestId, body, headers);
    if (status >= 500) return new ServerError(status, message, requestId, body, headers);
    return new APIError(status, message, requestId, body, headers);
  }
}

/** 400: the body is not valid JSON. */
export class BadRequestError extends APIError {
  override readonly name = "BadRequestError";
}

/** 401: no key, or a key that is unknown or deleted. */
export class AuthenticationError extends APIError {
  override readonly name = "AuthenticationError";
}

/** 403: the key does not authorize this store. */
export class PermissionDeniedError extends APIError {
  override readonly name = "PermissionDeniedError";
}

/** 404: the store does not exist or is paused (`STORE_NOT_FOUND`), or the record does not (`ORDER_NOT_FOUND`, ...). */
export class NotFoundError extends APIError {
  override readonly name = "NotFoundError";
}

/** 413: the body is over the service's size limit. */
export class PayloadTooLargeError extends APIError {
  override readonly name = "PayloadTooLargeError";
}

/** 415: the body was not sent as JSON. */
export class UnsupportedMediaTypeError extends APIError {
  override readonly name = "UnsupportedMediaTypeError";
}

/** 422: the body failed validation (`details` names each failing field by its dotted path), or a rule of the resource. */
export class ValidationError extends APIError {
  override readonly name = "ValidationError";
}

/** 409: the same `Idempotency-Key` is still being processed (retried automatically). */
export class ConflictError extends APIError {
  override readonly name = "ConflictError";
}

/** 429: too many requests for this key. `retryAfter` says how many seconds to wait. */
export class RateLimitError extends APIError {
  override readonly name = "RateLimitError";

  get retryAfter(): number | undefined {
    const value = Number(this.headers.get("retry-after"));
    return Number.isFinite(value) && value >= 0 ? value : undefined;
  }
}

/** 5xx: the service failed (503 when its database is unreachable). */
export class ServerError extends APIError {
  override readonly name = "ServerError";
}

/** The request never got an answer: DNS, refused connection, reset. */
export class ConnectionError extends CommerceIngestError {
  override readonly name: string = "ConnectionError";
  readonly status = undefined;

  constructor(
    message: string,
    readonly requestId: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** No answer within the timeout. */
export class TimeoutError extends ConnectionError {
  override readonly name = "TimeoutError";
}

/** The caller's AbortSignal aborted the request. */
export class AbortError extends CommerceIngestError {
  override readonly name = "AbortError";
}
