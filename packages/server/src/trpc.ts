import type { ErrorCode } from "@commerce-ingest/shared";
import { initTRPC } from "@trpc/server";
import "./validation.js";
import type { OpenApiMeta } from "trpc-to-openapi";
import type { z } from "zod";
import type { Context } from "./context.js";

/**
 * What a procedure answers, declared beside it: the REST adapter serves it and
 * the OpenAPI document is built from it, so the two cannot drift apart.
 */
export type ProcedureContract = {
  /** Each success status the procedure answers, with what it means. */
  success: Partial<Record<200 | 201 | 204, string>>;
  /** Every error it can answer; statuses and messages come from the shared error table. */
  errors: readonly ErrorCode[];
  /** The JSON body it reads (validated by the procedure itself, once, with the store's phone rules). */
  body?: z.ZodType;
};

export type Meta = OpenApiMeta & { contract?: ProcedureContract };

const t = initTRPC.meta<Meta>().context<Context>().create({
  // Errors never reach a client through tRPC's own transport: the REST adapter maps them.
  isDev: false,
});

export const router = t.router;
export const middleware = t.middleware;
export const createCallerFactory = t.createCallerFactory;
/** The base every procedure starts from; the guarded ones are built on it in auth/. */
export const baseProcedure = t.procedure;
