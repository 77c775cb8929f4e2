import { ERRORS, LIMITS, type ErrorCode, type ErrorDetail } from "@commerce-ingest/shared";

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
    // A refusal (4xx) is an answer, not a fault, and no log shows its stack: it takes none. tRPC copies a thrown
    // error's stack into its own, which formats it, at every refused call.
    const frames = Error.stackTraceLimit;
    if (ERRORS[code].status < 500) Error.stackTraceLimit = 0;
    super(ERRORS[code].message);
    Error.stackTraceLimit = frames;
    this.name = "AppError";
    this.status = ERRORS[code].status;
  }
}

/** A batch of more records than one request may carry: refused whole, before anything of it is read further. */
export const batchTooLarge = () =>
  new AppError("VALIDATION_FAILED", [{ path: "items", message: `must hold at most ${LIMITS.batchItems} records (send more batches)` }]);
