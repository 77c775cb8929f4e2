import { TRPCError, type TRPC_ERROR_CODE_KEY } from "@trpc/server";
import { findSession } from "../../accounts/member.service.js";
import { isDatabaseUnavailable } from "../../db/index.js";
import { AppError } from "../../errors.js";
import { baseProcedure, middleware } from "../../trpc.js";

export const SESSION_COOKIE = "console_session";

const CODES: Record<number, TRPC_ERROR_CODE_KEY> = {
  400: "BAD_REQUEST",
  401: "UNAUTHORIZED",
  403: "FORBIDDEN",
  404: "NOT_FOUND",
  409: "CONFLICT",
  413: "PAYLOAD_TOO_LARGE",
  422: "UNPROCESSABLE_CONTENT",
  429: "TOO_MANY_REQUESTS",
  503: "SERVICE_UNAVAILABLE",
};

/**
 * The console speaks tRPC's own error shape: the server's one error type is
 * mapped to the matching tRPC code (and so HTTP status) with the table's
 * message; anything unexpected stays a bare 500 (the formatter hides its text).
 */
const consoleErrors = middleware(async ({ next }) => {
  const result = await next();
  if (!result.ok) {
    const cause = result.error.cause;
    if (cause instanceof AppError) throw new TRPCError({ code: CODES[cause.status] ?? "INTERNAL_SERVER_ERROR", message: cause.message, cause });
    if (isDatabaseUnavailable(cause)) throw new TRPCError({ code: "SERVICE_UNAVAILABLE", message: "Service unavailable", cause });
  }
  return result;
});

/** Console procedures answer console requests only, and refuse a mutation another site's page started. */
export const publicConsoleProcedure = baseProcedure.use(consoleErrors).use(({ ctx, type, next }) => {
  const http = ctx.http;
  if (!http) throw new AppError("NOT_FOUND");
  if (type === "mutation" && !http.sameOrigin) throw new AppError("CROSS_SITE_REQUEST");
  return next({ ctx: { http } });
});

/** Signed in: the session cookie names a live session; every procedure is then scoped to its team. */
export const memberProcedure = publicConsoleProcedure.use(async ({ ctx, next }) => {
  const session = await findSession(ctx.db, ctx.accounts.settings, ctx.http.cookie(SESSION_COOKIE));
  if (!session) throw new AppError("SIGN_IN_REQUIRED");
  return next({ ctx: { session, caller: { address: ctx.http.address, userAgent: ctx.http.userAgent } } });
});

/**
 * An owner of the session's team: members, roles and the team's settings. A
 * member (stores, keys, imports, delivery) is refused with `owner_required`.
 */
export const ownerProcedure = memberProcedure.use(({ ctx, next }) => {
  if (ctx.session.role !== "owner") throw new AppError("OWNER_REQUIRED");
  return next();
});
