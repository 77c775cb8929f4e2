/** Where the client's log lines go: `console` by default, or any logger with these four methods (pino, winston, ...). */
export type Logger = {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
};

export type LogLevel = "debug" | "info" | "warn" | "error" | "off";

const LEVELS: readonly LogLevel[] = ["debug", "info", "warn", "error", "off"];

/** `COMMERCE_INGEST_LOG`'s value as a level; anything else is the default, `warn`. */
export function parseLogLevel(value: string | undefined): LogLevel {
  const level = value?.trim().toLowerCase();
  return LEVELS.find((known) => known === level) ?? "warn";
}

/** On standard error, as `console.error` writes, so a program's own output stays clean. */
const consoleLogger: Logger = {
  debug: (message, fields) => console.error(message, fields ?? ""),
  info: (message, fields) => console.error(message, fields ?? ""),
  warn: (message, fields) => console.error(message, fields ?? ""),
  error: (message, fields) => console.error(message, fields ?? ""),
};

/** The logger filtered to `level` and above. */
export function createLogger(level: LogLevel, logger: Logger = consoleLogger): Logger {
  const threshold = LEVELS.indexOf(level);
  const at = (name: Exclude<LogLevel, "off">) => (LEVELS.indexOf(name) >= threshold ? logger[name].bind(logger) : () => {});
  return { debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") };
}
