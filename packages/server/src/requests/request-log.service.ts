import { isDatabaseUnavailable } from "../db/index.js";
import type { Db } from "../db/types.js";
import { errorForLog, type Logger } from "../logger.js";
import { formatTimestamp } from "../db/sql.js";
import { deleteExpiredKeys } from "./idempotency.repository.js";
import * as repo from "./request-log.repository.js";
export type { RequestLogEntry } from "./request-log.repository.js";

/**
 * Keeps the recent API calls of each store for the console: written in
 * batches (every second, or every 500 calls) off the request's path, so a push
 * never waits for its own log line. A crash loses at most the last second of
 * log, never a push. Entries older than the retention are deleted as it goes.
 */
export type RequestLog = {
  /** A call as it was answered, and its bodies unless they are not kept: masked here, as kept. */
  record(call: LoggedCall, bodies: KeptBodies | undefined): void;
  /** A call to a store's path with a key no team has: counted by the key's first characters, never kept whole. */
  unknownKey(storeId: number, prefix: string): void;
  flush(): Promise<void>;
  close(): Promise<void>;
};

/** A call as the log keeps it, before it is masked: its path as requested. */
export type LoggedCall = Omit<repo.RequestLogEntry, "request_body" | "response_body"> & { path: string };
/** A call's bodies as parsed (either may be absent), and how many characters of each are kept. */
export type KeptBodies = { request: unknown; response: unknown; chars: number };

/** How many characters of an unknown key are kept: enough to tell a mistyped or old key apart, nothing to use. */
export const UNKNOWN_KEY_PREFIX = 4;
/** Distinct (store, prefix) pairs held between flushes; past them, a flood's calls are not counted. */
const UNKNOWN_HELD = 1000;

/** How often calls are written: a refused call shows in the console within about a second. */
const FLUSH_MS = 250;
const BATCH = 500;
const PRUNE_EVERY_MS = 10 * 60 * 1000;

export function startRequestLog(db: Db, logger: Logger, retentionSeconds: number): RequestLog {
  let pending: repo.RequestLogEntry[] = [];
  let unknown = new Map<string, { storeId: number; prefix: string; calls: number }>();
  let writing: Promise<void> = Promise.resolve();
  let lastPrune = 0;

  function flush(): Promise<void> {
    const batch = pending;
    pending = [];
    const counts = [...unknown.values()];
    unknown = new Map();
    writing = writing.then(async () => {
      try {
        await insertEach(batch);
        await repo.countUnknownKeys(db, counts);
        if (Date.now() - lastPrune > PRUNE_EVERY_MS) {
          lastPrune = Date.now();
          await repo.deleteEntriesBefore(db, retentionSeconds);
          // The same housekeeping drops idempotency keys past their 24 hours.
          await deleteExpiredKeys(db);
        }
      } catch (error) {
        logger.warn({ err: errorForLog(error), entries: batch.length }, "could not write the request log");
      }
    });
    return writing;
  }

  /** The entries in one statement; should it be refused for one of them, each alone, so that one loses only itself. */
  async function insertEach(batch: repo.RequestLogEntry[]): Promise<void> {
    try {
      await repo.insertEntries(db, batch);
    } catch (error) {
      if (batch.length === 1 || isDatabaseUnavailable(error)) throw error;
      for (const entry of batch) {
        await repo.insertEntries(db, [entry]).catch((failed: unknown) => {
          if (isDatabaseUnavailable(failed)) throw failed;
          logger.warn({ err: errorForLog(failed), requestId: entry.request_id }, "could not keep a call in the request log");
        });
      }
    }
  }

  const timer = setInterval(() => void flush(), FLUSH_MS);
  timer.unref();
  return {
    record(call, bodies) {
      pending.push({
        ...call,
        path: redactedPath(call.path),
        request_body: bodies?.request === undefined ? null : redactedJson(bodies.request, bodies.chars),
        response_body: bodies?.response === undefined ? null : redactedJson(bodies.response, bodies.chars),
      });
      if (pending.length >= BATCH) void flush();
    },
    unknownKey(storeId, prefix) {
      const at = `${storeId}:${prefix}`;
      const held = unknown.get(at);
      if (held) held.calls++;
      else if (unknown.size < UNKNOWN_HELD) unknown.set(at, { storeId, prefix, calls: 1 });
    },
    flush,
    async close() {
      clearInterval(timer);
      await flush();
    },
  };
}

/** One call as the console shows it: never a body, a phone or a key's value. */
export function toRequestEntry(row: Awaited<ReturnType<typeof repo.listEntries>>[number]) {
  return {
    id: row.id,
    at: formatTimestamp(row.created_at),
    method: row.method,
    route: row.route,
    path: row.path,
    status: row.status,
    code: row.code,
    error: row.error,
    external_id: row.record_external_id,
    request_id: row.request_id,
    latency_ms: Math.round(row.latency_ms * 10) / 10,
    key: row.key_name === null ? null : { name: row.key_name, last4: row.key_last4 ?? "" },
  };
}

export async function listRequests(db: Db, filter: repo.RequestLogFilter) {
  return (await repo.listEntries(db, filter)).map(toRequestEntry);
}

// --- Masking ---

/*
 * A body as the request log keeps it: JSON with every phone, e-mail and
 * personal field masked (by field name at any depth: `phone`, `email`,
 * `first_name`, `last_name`, `name`, `locale`, `tags`, what a customer's
 * erasure clears; and by shape, any string that is an e-mail or an
 * international phone, in longer texts too), cut at a size. What an
 * integrator needs to see why a call was refused (the fields, their values,
 * their nesting) stays; what names a person does not, so the erasure of a
 * customer leaves nothing of theirs in the log.
 */

const EMAIL = /^[^\s@]+@[^\s@]+$/;
const PHONE = /^\+?[\d\s().-]{7,}$/;
const MASK = "•••";
/** An international phone inside a longer text (a note that names one). */
const PHONE_IN_TEXT = /\+\d[\d\s().-]{5,}\d/g;
/** An e-mail inside a longer text. */
const EMAIL_IN_TEXT = /[^\s@"<>(),;:]+@[^\s@"<>(),;:]+\.[^\s@"<>(),;:]+/g;

/** `+14155552671` → `+14•••71`: enough to tell two numbers apart in a log, not to call one. */
export function maskPhone(text: string): string {
  return text.length <= 6 ? MASK : `${text.slice(0, 3)}${MASK}${text.slice(-2)}`;
}

/** `ada@example.com` → `a•••@example.com`. */
export function maskEmail(text: string): string {
  const at = text.lastIndexOf("@");
  return at <= 0 ? MASK : `${text[0] ?? ""}${MASK}${text.slice(at)}`;
}

/** `Rosalind` → `R•••`. */
const maskName = (text: string) => (text === "" ? text : `${text[0] ?? ""}${MASK}`);
/** A customer's fields that its erasure clears, beside its phone and e-mail (an order's tags are masked alike). */
const PERSONAL = new Set(["first_name", "last_name", "name", "locale", "tags"]);

function maskString(text: string, field: string | undefined): string {
  if (field !== undefined && PERSONAL.has(field)) return maskName(text);
  if (field === "email" || EMAIL.test(text)) return maskEmail(text);
  if (field === "phone" || field === "to_phone" || (PHONE.test(text) && /\d{7}/.test(text.replace(/\D/g, "")))) return maskPhone(text);
  return text.includes("+") || text.includes("@") ? text.replace(PHONE_IN_TEXT, maskPhone).replace(EMAIL_IN_TEXT, maskEmail) : text;
}

/** Thrown inside the walk when the text reached its cap. */
class Full extends Error {}

/**
 * The value as JSON, masked, at most `cap` characters: a longer one is cut
 * there and ends with `…` (no longer JSON, still readable). Stops walking at
 * the cap, so a large batch costs what its first `cap` characters cost.
 */
export function redactedJson(value: unknown, cap: number): string {
  const parts: string[] = [];
  let length = 0;
  const push = (text: string) => {
    parts.push(text);
    length += text.length;
    if (length > cap) throw new Full();
  };
  const walk = (node: unknown, field: string | undefined): void => {
    if (typeof node === "string") return push(JSON.stringify(maskString(node, field)));
    if (node === null || typeof node !== "object") return push(node === undefined ? "null" : JSON.stringify(node) ?? "null");
    if (Array.isArray(node)) {
      push("[");
      node.forEach((item, i) => {
        if (i > 0) push(",");
        walk(item, field);
      });
      return push("]");
    }
    push("{");
    let first = true;
    for (const [key, item] of Object.entries(node)) {
      if (item === undefined) continue;
      push(`${first ? "" : ","}${JSON.stringify(key)}:`);
      first = false;
      walk(item, key);
    }
    push("}");
  };
  try {
    walk(value, undefined);
    return parts.join("");
  } catch (error) {
    if (!(error instanceof Full)) throw error;
    return `${parts.join("").slice(0, cap)}…`;
  }
}

/** A path as the log keeps it: a segment that is an e-mail or a phone (a customer keyed by its phone) masked. */
export function redactedPath(path: string): string {
  const [pathname = "", query] = path.split("?", 2);
  const masked = pathname
    .split("/")
    .map((segment) => {
      let text: string;
      try {
        text = decodeURIComponent(segment);
      } catch {
        return segment;
      }
      const redacted = maskString(text, undefined);
      return redacted === text ? segment : encodeURIComponent(redacted);
    })
    .join("/");
  return query === undefined ? masked : `${masked}?${query}`;
}
