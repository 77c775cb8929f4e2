import type { Db } from "./db/types.js";
import type { AppError } from "./errors.js";
import type { Logger } from "./logger.js";
import type { RateLimiter } from "./auth/rate-limit.js";


export type Services = {
  db: Db;
  logger: Logger;
  rateLimiter: RateLimiter;
  adminToken: string;
  /** Called after a write succeeds, so an in-process worker picks up its jobs at once. */
  afterWrite?: () => void;
};

export type Context = Services & {
  requestId: string;
  /** The raw `Authorization` header, absent when the caller sent none. */
  authorization: string | undefined;
  /** What was wrong with the body, found before any procedure ran and reported after authorization. */
  bodyProblem: AppError | undefined;
  /** `X-Backfill`: historical data, stored without triggering automations. */
  backfill: boolean;
  /** Procedures set the success status here (201 on create, 204 on delete). */
  response: { status: number };
};

/** Builds a context without HTTP: tests and the adapter both come through here. */
export function createContextInner(
  services: Services,
  request: { requestId?: string; authorization?: string; bodyProblem?: AppError; backfill?: boolean } = {},
): Context {
  return {
    ...services,
    requestId: request.requestId ?? crypto.randomUUID(),
    authorization: request.authorization,
    bodyProblem: request.bodyProblem,
    backfill: request.backfill ?? false,
    response: { status: 200 },
  };
}
