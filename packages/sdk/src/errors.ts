import { ERROR_CODES, type ErrorCode } from "./codes.js";
import type { ErrorBody, ErrorDetail } from "./types.js";

/**
 * A code the SDK gives an error no API body named: the service's own codes
 * (`ErrorCode`) for its answers, these for the rest.
 */
export type ClientErrorCode =
  /** An answer that is not the API's error envelope (a proxy's 502 page, say). */
  | "unexpected_response"
  /** The request never got an answer: DNS, refused connection, reset. */
  | "connection_failed"
  /** No answer within the timeout. */
  | "timeout"
  /** The caller's AbortSignal aborted it. */
  | "aborted"
  /** The SDK was not given what it needs (a key, a fetch, a file). */
  | "invalid_usage"
  /** A messaging webhook whose signature is missing, malformed, wrong or too old. */
  | "webhook_signature_invalid";

/** An error's code: one of the API's, one of the SDK's own, or (from a newer service) one this SDK does not know yet, as sent. */
export type AnyErrorCode = ErrorCode | ClientErrorCode | (string & {});

/**
 * The error's code: the code the body carries, exactly as sent (one this SDK
 * does not know passes through: codes may be added); for a server older than
 * codes, the one whose message the body has at this status; else
 * `"unexpected_response"`.
 */
function codeOf(status: number, body: ErrorBody): AnyErrorCode {
  if (body.code !== undefined) return body.code;
  const byMessage = Object.entries(ERROR_CODES).find(([, entry]) => entry.status === status && entry.message === body.error);
  return byMessage ? byMessage[0] : "unexpected_response";
}

/** The body as the API's `{ error, code, details? }`, whatever came (an HTML error page becomes `{ error: "HTTP 502" }`). */
function errorBodyOf(status: number, body: unknown): ErrorBody {
  if (typeof body !== "object" || body === null || !("error" in body) || typeof body.error !== "string") return { error: `HTTP ${status}` };
  const details = "details" in body && Array.isArray(body.details) ? (body.details as ErrorDetail[]) : undefined;
  const code = "code" in body && typeof body.code === "string" ? body.code : undefined;
  return { error: body.error, ...(code === undefined ? {} : { code }), ...(details ? { details } : {}) };
}

/** Everything this SDK throws extends this class, and has a `code`. */
export class CommerceIngestError extends Error {
  override readonly name: string = "CommerceIngestError";
  /** What went wrong, to branch on: the API's code for its answers (`"invalid_api_key"`), else the SDK's own (`"timeout"`). */
  readonly code: AnyErrorCode;

  constructor(message: string, options?: { cause?: unknown; code?: AnyErrorCode | undefined }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = options?.code ?? "invalid_usage";
  }
}

/**
 * The API answered with an error status. Tell errors apart by `code` (stable),
 * or by class (one per status); `message` is the contract's exact text.
 */
export class APIError extends CommerceIngestError {
  override readonly name: string = "APIError";
  /**
   * The API's code for this answer, exactly as its body carries it, e.g.
   * `"store_not_found"` vs `"order_not_found"` (both 404): a reworded message
   * changes nothing. A code this SDK does not know yet comes through as sent.
   */
  declare readonly code: AnyErrorCode;
  /** The error body: `{ error, code, details? }`. */
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
    const read = errorBodyOf(status, body);
    super(message, { code: codeOf(status, read) });
    this.body = read;
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

/** 404: the store does not exist or is paused (`store_not_found`), or the record does not (`order_not_found`, ...). */
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
    options?: { cause?: unknown; code?: "connection_failed" | "timeout" },
  ) {
    super(message, { cause: options?.cause, code: options?.code ?? "connection_failed" });
  }
}

/** No answer within the timeout. */
export class TimeoutError extends ConnectionError {
  override readonly name = "TimeoutError";

  constructor(message: string, requestId: string, options?: { cause?: unknown }) {
    super(message, requestId, { cause: options?.cause, code: "timeout" });
  }
}

/** The caller's AbortSignal aborted the request. */
export class AbortError extends CommerceIngestError {
  override readonly name = "AbortError";

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, { cause: options?.cause, code: "aborted" });
  }
}
