import { ERRORS, errorBodyOf, type ErrorBody } from "@commerce-ingest/shared";
import { TRPCError } from "@trpc/server";
import type { Socket } from "node:net";
import type { Request, Response } from "express";
import { isDatabaseUnavailable } from "../db/index.js";
import { AppError } from "../errors.js";
import { hasIssues, toDetails } from "../validation.js";

export type ErrorResponse = {
  status: number;
  body: ErrorBody;
  headers: Record<string, string>;
  /** Set when the error was not one we meant to answer with: it gets logged. */
  unexpected?: unknown;
};

const RETRY_AFTER_UNAVAILABLE = "5";

/** Maps anything thrown into the contract's envelope. Nothing of the original leaks into the body. */
export function toErrorResponse(error: unknown): ErrorResponse {
  const cause = error instanceof TRPCError && error.cause ? error.cause : error;
  if (cause instanceof AppError) {
    return { status: cause.status, body: errorBodyOf(cause.code, cause.details), headers: cause.headers ?? {} };
  }
  // Only a failed input parse is the caller's fault; an output that fails its schema is ours.
  if (error instanceof TRPCError && error.code === "BAD_REQUEST" && hasIssues(cause)) {
    return {
      status: ERRORS.VALIDATION_FAILED.status,
      body: errorBodyOf("VALIDATION_FAILED", toDetails(cause.issues)),
      headers: {},
    };
  }
  if (isDatabaseUnavailable(cause)) {
    return {
      status: ERRORS.SERVICE_UNAVAILABLE.status,
      body: errorBodyOf("SERVICE_UNAVAILABLE"),
      headers: { "Retry-After": RETRY_AFTER_UNAVAILABLE },
      unexpected: cause,
    };
  }
  return { status: ERRORS.INTERNAL.status, body: errorBodyOf("INTERNAL"), headers: {}, unexpected: cause };
}

export function sendError(res: Response, response: Pick<ErrorResponse, "status" | "body" | "headers">): void {
  res.set(response.headers).status(response.status).json(response.body);
}

/**
 * How long a connection whose body was refused stays open to read the rest of
 * it: long enough for a client that wrote the whole body at once to have sent
 * it, short enough that one which never finishes holds nothing.
 */
const LINGER_MS = 2_000;

/**
 * Answers 413 so that every client reads it: a client that wrote its whole
 * body at once reads its answer only after the write, and a server that
 * closed with the body still arriving would reset the connection and lose
 * the answer on the way. So the rest of the body is read and dropped (a
 * "lingering close"), and the connection closed once it has all come, or
 * after `LINGER_MS`.
 */
export function refuseTooLarge(req: Request, res: Response): void {
  lingerAfterAnswer(req);
  sendErrorCode(res, "BODY_TOO_LARGE", { Connection: "close" });
}

/**
 * Closes the connection after the answer about to be sent, once the rest of the
 * body has come (read and dropped) or `LINGER_MS` has passed: a refusal sent
 * while the body still arrives is read by the client (see `refuseTooLarge`).
 */
export function lingerAfterAnswer(req: Request): void {
  // Node ends a `Connection: close` answer's socket with `destroySoon` once the answer is sent, whatever is still
  // arriving; this one reads the rest first. Its answer is on its way (`end`), and it is closed only when the rest has
  // come, or once the linger has passed.
  const socket = req.socket as Socket & { destroySoon?: () => void };
  socket.destroySoon = () => {
    socket.end();
    const close = () => {
      clearTimeout(timer);
      if (socket.writableFinished) socket.destroy();
      else socket.once("finish", () => socket.destroy());
    };
    const timer = setTimeout(close, LINGER_MS);
    if (req.complete) return close();
    req.once("end", close);
    req.resume();
  };
  req.res?.setHeader("Connection", "close");
}

export function sendErrorCode(res: Response, code: keyof typeof ERRORS, headers: Record<string, string> = {}): void {
  sendError(res, { status: ERRORS[code].status, body: errorBodyOf(code), headers });
}
