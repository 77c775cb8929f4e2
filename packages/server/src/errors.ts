import { ERRORS, type ErrorCode, type ErrorDetail } from "@commerce-ingest/shared";

/**
 * The server's one error type. Its code picks the status and message from the
 * shared table; `details` names failing fields on 422s.
 */
export class AppError extends Error {
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    readonly details?: ErrorDetail[],
    readonly headers?: Record<string, string>,
  ) {
    super(ERRORS[code].message);
    this.name = "AppError";
    this.status = ERRORS[code].status;
  }
}
