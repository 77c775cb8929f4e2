import fs from "node:fs";
import path from "node:path";
import { createExpressMiddleware } from "@trpc/server/adapters/express";
import { parseCookie } from "cookie";
import compression from "compression";
import express, { type Request, type Response } from "express";
import { consoleRouter } from "./console.router.js";
import { createContextInner, type ConsoleHttp, type Services } from "../../context.js";
import { AppError } from "../../errors.js";
import { errorForLog } from "../../logger.js";

export const CONSOLE_API_PREFIX = "/console/trpc";

/**
 * True unless the browser says another site started the request: modern
 * browsers send `Sec-Fetch-Site` and, on every POST, `Origin`. A client that
 * sends neither is not a browser, and so no cross-site page can drive it.
 */
function sameOrigin(req: Request): boolean {
  const site = req.headers["sec-fetch-site"];
  if (typeof site === "string") return site === "same-origin" || site === "none";
  const origin = req.headers.origin;
  if (typeof origin !== "string") return true;
  try {
    return new URL(origin).host === req.headers.host;
  } catch {
    return false;
  }
}

function consoleHttp(req: Request, res: Response, cookieSecure: boolean): ConsoleHttp {
  const cookies = parseCookie(req.headers.cookie ?? "");
  const base = { httpOnly: true, sameSite: "lax" as const, secure: cookieSecure, path: "/" };
  return {
    cookie: (name) => cookies[name],
    setCookie: (name, value, { maxAgeSeconds }) => void res.cookie(name, value, { ...base, maxAge: maxAgeSeconds * 1000 }),
    clearCookie: (name) => void res.clearCookie(name, base),
    address: req.socket.remoteAddress ?? "unknown",
    userAgent: req.headers["user-agent"]?.slice(0, 300) ?? null,
    sameOrigin: sameOrigin(req),
  };
}

/** tRPC's own HTTP handler for the console's procedures, with its own small JSON body reader. */
export function createConsoleApi(services: Services): express.Router {
  const api = express.Router();
  api.use((_req, res, next) => {
    res.locals.route = CONSOLE_API_PREFIX;
    next();
  });
  api.use(express.json({ limit: "64kb" }));
  api.use(
    createExpressMiddleware({
      router: consoleRouter,
      createContext: ({ req, res }) =>
        createContextInner(services, { requestId: String(res.locals.requestId), http: consoleHttp(req, res, services.accounts.cookieSecure) }),
      onError: ({ error, path: procedure }) => {
        if (error.code === "INTERNAL_SERVER_ERROR") services.logger.error({ err: errorForLog(error.cause ?? error), procedure }, "console request failed");
      },
      // An error's own headers (a throttled sign-in's Retry-After) reach the browser as the API's do.
      responseMeta: ({ errors }) => {
        const headers = Object.assign({}, ...errors.map((error) => (error.cause instanceof AppError ? (error.cause.headers ?? {}) : {}))) as Record<string, string>;
        return Object.keys(headers).length > 0 ? { headers } : {};
      },
    }),
  );
  return api;
}

/** The console's client routes: each answers with the app's index.html, and nothing else does. */
const CLIENT_ROUTE =
  /^\/(?:sign-in|forgot-password|reset\/[^/]+|verify\/[^/]+|account|invite\/[^/]+|settings(?:\/[\w-]+)?|stores(?:\/\d+(?:\/[\w-]+(?:\/\d+)?|\/records\/(?:orders|customers|checkouts|shipments)\/[^/]+)?)?|team|audit)?\/?$/;

/**
 * The built single-page app: hashed assets cached for a year, index.html for
 * client routes (never cached, so a new build shows at once). The API's,
 * operator's and service's paths are never answered with it.
 */
export function createConsolePages(dir: string): express.Router | undefined {
  const index = path.join(dir, "index.html");
  if (!fs.existsSync(index)) return undefined;
  const pages = express.Router();
  // The pages and their scripts travel compressed (gzip or Brotli, as the browser takes them); the APIs' answers are left alone.
  pages.use(compression());
  pages.use("/assets", express.static(path.join(dir, "assets"), { immutable: true, maxAge: "365d", index: false }));
  pages.get(CLIENT_ROUTE, (_req, res) => {
    res.setHeader("Cache-Control", "no-cache");
    res.sendFile(index);
  });
  pages.use(express.static(dir, { index: false, maxAge: "1h" }));
  // A browser's page that names nothing: the console's own "not found" page, with a 404. API clients, the API's
  // paths, the console's procedures and assets keep their JSON 404 (they never ask for HTML first).
  pages.get(/.*/, (req, res, next) => {
    const wantsPage = /^text\/html\b/.test(req.headers.accept ?? "");
    if (!wantsPage || /^\/(?:api|admin|console|assets)(?:\/|$)/.test(req.path)) return next();
    res.status(404).setHeader("Cache-Control", "no-cache");
    res.sendFile(index);
  });
  return pages;
}
