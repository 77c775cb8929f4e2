import type { Db } from "./db/types.js";
import type { Logger } from "./logger.js";
import type { RateLimiter } from "./auth/rate-limit.js";

/** What the REST adapter learnt about the body before any procedure ran. */
export type BodyProblem = "MALFORMED_JSON" | "UNSUPPORTED_MEDIA_TYPE" | "NOT_AN_OBJECT";

export type Services = {
  db: Db;
  logger: Logger;
  rateLimiter: RateLimiter;
  adminToken: string;
};

export type Context = Services & {
  requestId: string;
  /** The raw `Authorization` header, absent when the caller sent none. */
  authorization: string | undefined;
  bodyProblem: BodyProblem | undefined;
  /** Procedures set the success status here (201 on create, 204 on delete). */
  response: { status: number };
};

/** Builds a context without HTTP: tests and the adapter both come through here. */
export function createContextInner(
  services: Services,
  request: { requestId?: string; authorization?: string; bodyProblem?: BodyProblem } = {},
): Context {
  return {
    ...services,
    requestId: request.requestId ?? crypto.randomUUID(),
    authorization: request.authorization,
    bodyProblem: request.bodyProblem,
    response: { status: 200 },
  };
}
