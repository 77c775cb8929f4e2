import { initTRPC } from "@trpc/server";
import "./validation.js";
import type { OpenApiMeta } from "trpc-to-openapi";
import type { Context } from "./context.js";

const t = initTRPC.meta<OpenApiMeta>().context<Context>().create({
  // Errors never reach a client through tRPC's own transport: the REST adapter maps them.
  isDev: false,
});

export const router = t.router;
export const middleware = t.middleware;
export const createCallerFactory = t.createCallerFactory;
/** The base every procedure starts from; the guarded ones are built on it in auth/. */
export const baseProcedure = t.procedure;
