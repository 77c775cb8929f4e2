import { randomUUID } from "node:crypto";
import http from "node:http";
import type { Duplex } from "node:stream";
import { ERRORS, errorBodyOf, type ErrorCode } from "@commerce-ingest/shared";
import type express from "express";

/** How long a connection may take to say what it wants, and how many may be open at once. */
export type ConnectionLimits = {
  /** Time to receive a request's headers. */
  headersTimeoutMs: number;
  /** Time a request's body has to arrive whole: one that trickles is answered 408 (the app keeps this deadline, `AppOptions.bodyTimeoutMs`). */
  requestTimeoutMs: number;
  /** How long an idle keep-alive connection stays open. */
  keepAliveTimeoutMs: number;
  /** Open connections per process; more are refused at once. */
  maxConnections: number;
};

export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = { headersTimeoutMs: 10_000, requestTimeoutMs: 30_000, keepAliveTimeoutMs: 5_000, maxConnections: 1_000 };

/**
 * Node closes an idle kept-alive connection a second after the keep-alive
 * timeout it tells clients (`Keep-Alive: timeout=N`), so that a client stops
 * reusing it first. The timeout told is that second shorter than the limit,
 * so the connection is closed within the limit.
 */
const KEEP_ALIVE_MARGIN_MS = 1_000;

/**
 * Express gives each request and response its methods by changing their
 * prototypes as they arrive (`Object.setPrototypeOf` in `app.handle`). On
 * Node 20 that change made every later access to them slower: a bare route
 * with it cost 0.41-0.55 ms of CPU a request, without it 0.25-0.27 ms (the
 * same route, runs alternated; see docs/performance.md). So the server
 * makes its requests and responses of classes that carry express's methods
 * from the start, and makes those classes' prototypes the app's: the change
 * express then asks for is to the prototype they already have, which is no
 * change at all.
 * Express is otherwise untouched; a request made by another server (a test's
 * `app.listen`) is changed as before.
 */
function expressClasses(app: express.Express): { IncomingMessage: typeof http.IncomingMessage; ServerResponse: typeof http.ServerResponse } {
  class Request extends http.IncomingMessage {}
  class Response extends http.ServerResponse {}
  carry(Request.prototype, app.request, http.IncomingMessage.prototype);
  carry(Response.prototype, app.response, http.ServerResponse.prototype);
  app.request = Request.prototype as unknown as express.Request;
  app.response = Response.prototype as unknown as express.Response;
  return { IncomingMessage: Request, ServerResponse: Response as unknown as typeof http.ServerResponse };
}

/** Every property of `from` and of its prototypes up to `until`, defined on `to` (the nearest of a name wins, as when looked up). */
function carry(to: object, from: object, until: object): void {
  for (let at: object | null = from; at !== null && at !== until; at = Object.getPrototypeOf(at) as object | null) {
    for (const [key, descriptor] of Object.entries(Object.getOwnPropertyDescriptors(at))) {
      if (!Object.prototype.hasOwnProperty.call(to, key)) Object.defineProperty(to, key, descriptor);
    }
  }
}

/**
 * The HTTP server with bounded waits: Node's defaults let a client hold a
 * connection for minutes by sending slowly; these cut it in seconds, checked
 * every second rather than every thirty. A connection that sends nothing at
 * all, which Node's header timeout never sees (it starts with a request's
 * first byte), is closed once the header timeout has passed.
 */
export function createHttpServer(app: express.Express, limits: ConnectionLimits): http.Server {
  const server = http.createServer(
    {
      ...expressClasses(app),
      headersTimeout: limits.headersTimeoutMs,
      // Node's request timeout bounds a whole request, an upload of a shop's history too: the app keeps
      // the body's deadline instead (see `boundBody` in app.ts), by time for a body, by silence for an upload.
      requestTimeout: 0,
      keepAliveTimeout: Math.max(limits.keepAliveTimeoutMs - KEEP_ALIVE_MARGIN_MS, Math.ceil(limits.keepAliveTimeoutMs / 2)),
      connectionsCheckingInterval: 1_000,
    },
    app,
  );
  server.maxConnections = limits.maxConnections;
  server.on("connection", (socket: Duplex & { bytesRead: number }) => {
    // A byte received: Node's own header and request timeouts bound the connection from then on.
    const silent = setTimeout(() => socket.bytesRead === 0 && socket.destroy(), limits.headersTimeoutMs);
    socket.once("close", () => clearTimeout(silent));
  });
  server.on("clientError", answerProtocolError);
  return server;
}

/** What a request Node could not read as HTTP answers, by the parser's error code. */
function protocolErrorCode(error: NodeJS.ErrnoException): ErrorCode {
  if (error.code === "HPE_HEADER_OVERFLOW") return "HEADERS_TOO_LARGE";
  if (error.code === "ERR_HTTP_REQUEST_TIMEOUT") return "REQUEST_TIMEOUT";
  return "MALFORMED_REQUEST";
}

/**
 * A request Node cannot parse (a length that lies or contradicts chunked
 * encoding, headers too large, a request that took too long) answers the
 * contract's JSON error, with its request id, where the connection can still
 * take an answer; then the connection is closed, as what follows on it cannot
 * be trusted.
 */
export function answerProtocolError(error: NodeJS.ErrnoException, socket: Duplex & { _httpMessage?: { headersSent?: boolean } | null }): void {
  // A response already begun on this connection (as Node's own handler checks): nothing more can be said on it.
  if (error.code === "ECONNRESET" || !socket.writable || socket._httpMessage?.headersSent) {
    socket.destroy();
    return;
  }
  const code = protocolErrorCode(error);
  const { status } = ERRORS[code];
  const body = JSON.stringify(errorBodyOf(code));
  socket.end(
    [
      `HTTP/1.1 ${status} ${http.STATUS_CODES[status] ?? ""}`,
      "Content-Type: application/json; charset=utf-8",
      `Content-Length: ${Buffer.byteLength(body)}`,
      `X-Request-Id: ${randomUUID()}`,
      "Cache-Control: no-store",
      "Connection: close",
      "",
      body,
    ].join("\r\n"),
  );
}
