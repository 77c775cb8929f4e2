import { pino, type Logger } from "pino";

export type { Logger };

/** JSON lines on stdout. Nothing here ever logs a key, an Authorization header or a body. */
export function createLogger(level: string): Logger {
  return pino({
    level,
    base: { service: "commerce-ingest" },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: ["authorization", "*.authorization", "headers.authorization", "key"], censor: "[redacted]" },
  });
}
