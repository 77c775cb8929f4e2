import { ERRORS, errorBodyOf, type ErrorBody } from "@commerce-ingest/shared";
import { TRPCError } from "@trpc/server";
import { isDatabaseUnavailable } from "./db/index.js";
import { AppError } from "./errors.js";
import { hasIssues, toDetails } from "./validation.js";

export type ErrorResponse = {
  status: number;
  body: ErrorBody;
  headers: Record<string, string>;
  /** Set when the error was not one we meant to answer with: it gets logged. */
  unexpected?: unknown;
};

const RETRY_AFTER_UNAVAILABLE = "5";

/** Maps anything thrown into the contract's envelope. Nothing of the original leaks into the body. */
export function toErrorResponse(error: unknown): ErrorResponse {
  const cause = error instanceof TRPCError && error.cause ? error.cause : error;
  if (cause instanceof AppError) {
    return { status: cause.status, body: errorBodyOf(cause.code, cause.details), headers: cause.headers ?? {} };
  }
  // Only a failed input parse is the caller's fault; an output that fails its schema is ours.
  if (error instanceof TRPCError && error.code === "BAD_REQUEST" && hasIssues(cause)) {
    return {
      status: ERRORS.VALIDATION_FAILED.status,
      body: errorBodyOf("VALIDATION_FAILED", toDetails(cause.issues)),
      headers: {},
    };
  }
  if (isDatabaseUnavailable(cause)) {
    return {
      status: ERRORS.SERVICE_UNAVAILABLE.status,
      body: errorBodyOf("SERVICE_UNAVAILABLE"),
      headers: { "Retry-After": RETRY_AFTER_UNAVAILABLE },
      unexpected: cause,
    };
  }
  return { status: ERRORS.INTERNAL.status, body: errorBodyOf("INTERNAL"), headers: {}, unexpected: cause };
}

