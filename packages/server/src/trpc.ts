import { ERRORS, type ErrorCode } from "@commerce-ingest/shared";
import { initTRPC } from "@trpc/server";
import { hasIssues, toDetails } from "./validation.js";
import type { OpenApiMeta } from "trpc-to-openapi";
import type { z } from "zod";
import type { Context } from "./context.js";
import { AppError } from "./errors.js";

/**
 * What a procedure answers, declared beside it: the REST adapter serves it and
 * the OpenAPI document is built from it, so the two cannot drift apart.
 */
export type ProcedureContract = {
  /** Each success status the procedure answers, with what it means. */
  success: Partial<Record<200 | 201 | 202 | 204, string>>;
  /** Every error it can answer; statuses and messages come from the shared error table. */
  errors: readonly ErrorCode[];
  /** The JSON body it reads (validated by the procedure itself, once, with the store's phone rules). */
  body?: z.ZodType;
  /** A realistic body the live service accepts: the document's example, pre-filled by /docs' "Try it out". */
  example?: object;
  /** A batch: the rate limit counts its records (`items`), not the request. */
  batch?: boolean;
  /**
   * A streamed upload rather than a JSON body: the adapter neither buffers nor
   * parses it, applies no request deadline, and hands the procedure the request
   * itself (`ctx.upload`). Documented with this media type.
   */
  upload?: { mediaType: string; description: string; example?: string; /** What it reads besides, from the query (and the path). */ query: z.ZodType };
  /** Answers a stream rather than one JSON value: the procedure returns `{ lines }`, sent one JSON value per line in this media type. */
  stream?: { mediaType: string; item: z.ZodType };
};

export type Meta = OpenApiMeta & { contract?: ProcedureContract };

/** Each REST route's contract, as its procedure declared it (see `rest`). */
const contracts = new Map<string, ProcedureContract>();
const routeKey = (method: string, path: string) => `${method.toUpperCase()} ${path}`;

/**
 * A procedure's REST route and what it answers, declared beside it:
 * `.meta(rest({ method, path, ... }, contract))`. tRPC keeps the route (the
 * OpenAPI document is generated from it); the contract is kept here too, by
 * route, so the REST adapter and the document read it back without reaching
 * into tRPC's internals.
 */
export function rest(openapi: NonNullable<OpenApiMeta["openapi"]>, contract?: ProcedureContract): Meta {
  if (!contract) return { openapi };
  contracts.set(routeKey(openapi.method, openapi.path), contract);
  return { openapi, contract };
}

/** The contract a route's procedure declared with `rest`. */
export const contractOf = (method: string, path: string): ProcedureContract | undefined => contracts.get(routeKey(method, path));

const t = initTRPC.meta<Meta>().context<Context>().create({
  // REST errors never reach a client through tRPC's transport (the REST adapter maps them); the
  // console's do, and then show the error table's message and 422 details, never an unexpected error's text.
  isDev: false,
  // A refused input names each field it refused in `details`, so a form can show the problem beside the field.
  errorFormatter({ shape, error }) {
    const cause = error.cause;
    const issues = !(cause instanceof AppError) && hasIssues(cause) ? toDetails(cause.issues) : undefined;
    const details = cause instanceof AppError ? (cause.details ?? null) : (issues ?? null);
    const message = error.code === "INTERNAL_SERVER_ERROR" ? "Internal server error" : issues ? issues.map((detail) => `${detail.path} ${detail.message}`.trim()).join("; ") : shape.message;
    const errorCode = cause instanceof AppError ? ERRORS[cause.code].code : issues ? ERRORS.VALIDATION_FAILED.code : null;
    return { ...shape, message, data: { code: shape.data.code, httpStatus: shape.data.httpStatus, errorCode, details } };
  },
});

export const router = t.router;
export const middleware = t.middleware;
export const createCallerFactory = t.createCallerFactory;
/** The base every procedure starts from; the guarded ones are built on it in auth/. */
export const baseProcedure = t.procedure;
