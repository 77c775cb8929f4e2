import { ERRORS, errorBodyOf } from "@commerce-ingest/shared";
import type { Socket } from "node:net";
import type { Request, Response } from "express";
import type { ErrorResponse } from "../error-response.js";

export { toErrorResponse, type ErrorResponse } from "../error-response.js";

export function sendError(res: Response, response: Pick<ErrorResponse, "status" | "body" | "headers">): void {
  // For the request log, whoever answered: the error's code and message.
  res.locals.errorCode ??= response.body.code;
  res.locals.errorMessage ??= response.body.error;
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
