import http from "node:http";
import type express from "express";

/** How long a connection may take to say what it wants, and how many may be open at once. */
export type ConnectionLimits = {
  /** Time to receive a request's headers. */
  headersTimeoutMs: number;
  /** Time to receive a whole request, body included: a body that trickles is cut here (408). */
  requestTimeoutMs: number;
  /** How long an idle keep-alive connection stays open. */
  keepAliveTimeoutMs: number;
  /** Open connections per process; more are refused at once. */
  maxConnections: number;
};

export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = { headersTimeoutMs: 10_000, requestTimeoutMs: 30_000, keepAliveTimeoutMs: 5_000, maxConnections: 1_000 };

/**
 * The HTTP server with bounded waits: Node's defaults let a client hold a
 * connection for minutes by sending slowly; these cut it in seconds, checked
 * every second rather than every thirty.
 */
export function createHttpServer(app: express.Express, limits: ConnectionLimits): http.Server {
  const server = http.createServer(
    {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      connectionsCheckingInterval: 1_000,
    },
    app,
  );
  server.maxConnections = limits.maxConnections;
  return server;
}
