import { pino, type DestinationStream, type Logger } from "pino";
import pretty from "pino-pretty";

export type { Logger };

/**
 * Logs on stdout (or `destination`): JSON lines (for machines and log
 * collectors), or readable, coloured lines for a person at a terminal. Nothing
 * here ever logs a key, an Authorization header or a body; should a field of
 * that name ever be logged, it is censored.
 *
 * JSON lines go to stdout without the service waiting on each write: lines
 * logged while one is being written go out together in the next, off the
 * thread that serves requests (a write per line was a twelfth of an order
 * push's CPU). What is still in hand when the process exits, a fatal error's
 * line included, is written before it ends; only a process killed outright
 * can lose its last few milliseconds of lines.
 */
export function createLogger(level: string, format: "json" | "pretty" = "json", destination?: DestinationStream): Logger {
  const options = {
    level,
    base: { service: "commerce-ingest" },
    timestamp: pino.stdTimeFunctions.isoTime,
    // Named paths only: a path that starts with a wildcard makes pino pass every field of every line
    // through the redactor (a sixth of what the service allocated taking batches and running their automations).
    redact: { paths: ["authorization", "headers.authorization", "req.headers.authorization", "request.authorization", "key", "apiKey"], censor: "[redacted]" },
  };
  // In the process itself (no worker thread): a terminal's pace is not a production load.
  return format === "pretty"
    ? pino(options, pretty({ colorize: true, ignore: "pid,hostname,service", translateTime: "SYS:HH:MM:ss.l", singleLine: true, ...(destination ? { destination } : {}) }))
    : pino(options, destination ?? pino.destination({ dest: 1, sync: false }));
}

/**
 * An error as logs may keep it: its kind, code, message and stack, with quoted
 * values taken out of the message. Database errors carry `detail`, `where`
 * and messages that echo input (a customer's data); none of that is logged.
 */
export function errorForLog(error: unknown): Record<string, unknown> {
  if (!(error instanceof Error)) return { message: "non-error thrown" };
  const code = "code" in error ? String(error.code) : undefined;
  const scrub = (text: string) => text.replace(/"[^"]*"|'[^']*'/g, '"…"').slice(0, 300);
  return {
    type: error.constructor.name,
    ...(code ? { code } : {}),
    message: scrub(error.message),
    stack: error.stack ? [scrub(error.message), ...error.stack.split("\n").slice(1, 12)].join("\n") : undefined,
  };
}

/**
 * A path as logs may keep it: long digit runs (phone numbers used as ids)
 * masked, and the secret of a console link (an invitation, an e-mail's proof,
 * a password reset: the browser asks for its page) left out.
 */
export function pathForLog(path: string): string {
  return path.replace(/^\/(invite|verify|reset)\/[^/]+/, "/$1/…").replace(/(?:%2B|\+)?\d{6,}/gi, "…");
}
