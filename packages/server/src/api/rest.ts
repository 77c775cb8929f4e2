import { type AnyRouter, TRPCError } from "@trpc/server";
import { once } from "node:events";
import express, { type Request, type Response } from "express";
import { generateOpenApiDocument } from "trpc-to-openapi";
import type { Context } from "../context.js";
import { contractOf, createCallerFactory, type ProcedureContract } from "../trpc.js";
import type { AppError } from "../errors.js";
import { ReplayedResponse } from "../records/procedures.js";
import { readJsonObject } from "../records/write-path.js";
import { lingerAfterAnswer, sendError, sendErrorCode, toErrorResponse } from "./errors.js";

type Method = "GET" | "POST" | "PATCH" | "PUT" | "DELETE";

export type RestRoute = {
  method: Method;
  /** The documented path, `{param}` style. */
  path: string;
  /** The procedure's path in the router (`orders.create`). */
  procedurePath: string;
  /** What the procedure answers, as it declares it (see `rest`). */
  contract: ProcedureContract | undefined;
};

const BODY_METHODS = new Set<Method>(["POST", "PATCH", "PUT"]);
const METHODS: readonly Method[] = ["GET", "POST", "PATCH", "PUT", "DELETE"];

/**
 * Every procedure that declares a REST route, from the OpenAPI document that
 * trpc-to-openapi generates of the router (each operation's id is its
 * procedure's path, dots as dashes), with the contract it declared: the
 * adapter serves exactly what the document says.
 */
export function listRestRoutes(appRouter: AnyRouter): RestRoute[] {
  const document = generateOpenApiDocument(appRouter, { title: "routes", version: "0", baseUrl: "/" });
  return Object.entries(document.paths ?? {}).flatMap(([path, operations]) =>
    METHODS.flatMap((method) => {
      const operation = (operations as Record<string, { operationId?: string } | undefined>)[method.toLowerCase()];
      if (!operation?.operationId) return [];
      return [{ method, path, procedurePath: operation.operationId.replaceAll("-", "."), contract: contractOf(method, path) }];
    }),
  );
}

/** A procedure of the caller by its path (`orders.create`), as tRPC's server-side caller exposes it. */
type Call = (input: unknown) => Promise<unknown>;
function procedureOf(caller: object, procedurePath: string): Call {
  let at: unknown = caller;
  for (const key of procedurePath.split(".")) at = (at as Record<string, unknown>)[key];
  return at as Call;
}

export type RestAdapterOptions = {
  appRouter: AnyRouter;
  createContext: (req: Request, res: Response, body: { value?: Record<string, unknown>; problem?: AppError; upload?: Request }) => Context;
  onUnexpectedError: (error: unknown, req: Request, res: Response) => void;
  /** The longest a request may take before it is answered 503 (its work may still finish: upserts are safe to retry). */
  deadlineMs: number;
  /** What the bodies held at once may weigh: a parsed body takes its weight from it. */
  bodies: BodyBudget;
};

class DeadlineExceeded extends Error {}

/** The call's result, or DeadlineExceeded once the deadline passes; a late outcome is dropped quietly. */
function withDeadline<T>(call: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DeadlineExceeded("request deadline exceeded")), ms);
  });
  call.catch(() => undefined);
  return Promise.race([call, deadline]).finally(() => clearTimeout(timer));
}

/** A stream of JSON values, one per line, written as the client reads them (never held whole). */
async function sendLines(res: Response, status: number, mediaType: string, lines: AsyncIterable<unknown>): Promise<void> {
  res.status(status).type(mediaType);
  for await (const line of lines) {
    if (res.destroyed) return;
    if (!res.write(`${JSON.stringify(line)}\n`)) await once(res, "drain");
  }
  res.end();
}

/**
 * Serves each procedure on its documented method and path, with the contract's
 * envelope: the success status the procedure chose, `{ error, details? }` on
 * failure, 405 with `Allow` for a known path with another method. Procedures
 * are called through tRPC's server-side caller, with the request's context.
 */
export function createRestRouter(options: RestAdapterOptions): express.Router {
  const restRouter = express.Router();
  const routes = listRestRoutes(options.appRouter);
  const createCaller = createCallerFactory(options.appRouter);
  /** Per Express path: the documented path (for logs) and the methods it answers. */
  const byPath = new Map<string, { documented: string; methods: Method[] }>();

  for (const route of routes) {
    const expressPath = route.path.replace(/\{(\w+)\}/g, ":$1");
    const known = byPath.get(expressPath) ?? { documented: route.path, methods: [] };
    known.methods.push(route.method);
    byPath.set(expressPath, known);

    restRouter[route.method.toLowerCase() as Lowercase<Method>](expressPath, async (req: Request, res: Response) => {
      res.locals.route = route.path;
      const upload = route.contract?.upload !== undefined;
      let body: { value?: Record<string, unknown>; problem?: AppError; upload?: Request } = {};
      if (upload) body = { upload: req };
      else if (BODY_METHODS.has(route.method)) {
        const read = readJsonObject(req);
        // Weighed at once, before anything else may run: one unweighed body at a time, at most.
        if ("weight" in read && !options.bodies.hold(res, read.weight)) return sendErrorCode(res, "SERVER_BUSY", { "Retry-After": "1" });
        body = read;
      }
      // Path parameters win over body fields of the same name. The body also goes alone in the
      // context: the shop API's body parser reads it there, never mixed with the path.
      const input: Record<string, unknown> = { ...(route.method === "GET" || upload ? req.query : body.value), ...req.params };
      // For the request log: the body as parsed (it masks and cuts it when it keeps it).
      if (body.value !== undefined) res.locals.requestBody = body.value;

      const ctx = options.createContext(req, res, body);
      res.locals.context = ctx;
      try {
        const call = procedureOf(createCaller(ctx), route.procedurePath)(input);
        // An upload takes as long as its file takes to arrive; what it does after is bounded by the database's timeouts.
        const result = upload ? await call : await withDeadline(call, options.deadlineMs);
        // A status the procedure does not declare would be missing from the document: a bug to see in the logs.
        if (route.contract && !(ctx.response.status in route.contract.success)) {
          options.onUnexpectedError(new Error(`${route.procedurePath} answered ${ctx.response.status}, which its contract does not declare`), req, res);
        }
        if (ctx.response.headers) res.set(ctx.response.headers);
        if (ctx.response.status === 204) {
          res.status(204).end();
        } else if (route.contract?.stream) {
          await sendLines(res, ctx.response.status, route.contract.stream.mediaType, (result as { lines: AsyncIterable<unknown> }).lines);
        } else {
          res.locals.responseBody = result;
          res.status(ctx.response.status).json(result);
        }
      } catch (error) {
        // A stream that failed once begun cannot become an error answer: the client sees it cut short.
        if (res.headersSent) {
          options.onUnexpectedError(error, req, res);
          res.destroy();
          return;
        }
        if (error instanceof DeadlineExceeded) {
          options.onUnexpectedError(error, req, res);
          sendErrorCode(res, "SERVICE_UNAVAILABLE", { "Retry-After": "5" });
          return;
        }
        const cause = error instanceof TRPCError && error.cause ? error.cause : error;
        if (cause instanceof ReplayedResponse) {
          res.set({ "Idempotent-Replayed": "true", "X-Request-Id": cause.requestId }).status(cause.status);
          if (cause.body === null) res.end();
          else res.type("application/json").send(cause.body);
          return;
        }
        const response = toErrorResponse(error);
        if (ctx.response.headers) res.set(ctx.response.headers);
        if (response.unexpected !== undefined) options.onUnexpectedError(response.unexpected, req, res);
        res.locals.errorMessage = response.body.error;
        res.locals.errorDetails = response.body.details;
        res.locals.errorCode = response.body.code;
        res.locals.responseBody = response.body;
        // An upload refused before it was read whole: answered so that the client reads it (see `refuseTooLarge`).
        if (upload && !req.complete) lingerAfterAnswer(req);
        sendError(res, response);
      }
    });
  }

  for (const [expressPath, { documented, methods }] of byPath) {
    restRouter.all(expressPath, (_req, res) => {
      res.locals.route = documented;
      sendErrorCode(res, "METHOD_NOT_ALLOWED", { Allow: methods.join(", ") });
    });
  }
  return restRouter;
}

/**
 * The request bodies a process holds at once, weighed as they sit in memory:
 * each takes its share before a byte of it is read (its declared length, or
 * the limit when it declares none) and grows it once parsed (see `weightOf`);
 * the share comes back when the answer is done. A body that finds no room is
 * answered 503 `server_busy`, unread: many connections at once, each with a
 * body whose values weigh twenty times its bytes, cannot add up past the
 * budget.
 */
export type BodyBudget = {
  /** Grows the request's share to `bytes`: false, and nothing taken, when it would pass the budget. */
  hold(res: Response, bytes: number): boolean;
  readonly used: number;
};

export function bodyBudget(most: number): BodyBudget {
  let used = 0;
  return {
    hold(res, bytes) {
      const held = (res.locals.bodyWeight as number | undefined) ?? 0;
      if (bytes <= held) return true;
      // A body alone is always taken: a budget smaller than one body must not refuse it for ever.
      if (used > held && used - held + bytes > most) return false;
      used += bytes - held;
      res.locals.bodyWeight = bytes;
      if (held === 0) res.once("close", () => (used -= res.locals.bodyWeight as number));
      return true;
    },
    get used() {
      return used;
    },
  };
}
