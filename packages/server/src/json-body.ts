import type { Request } from "express";
import type { ErrorDetail } from "@commerce-ingest/shared";
import { AppError } from "./errors.js";
import { unstorableText } from "./text.js";

export const MAX_JSON_DEPTH = 32;

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** A field's place in the body, from its parent: spelled out only when a problem names it. */
type Path = { key: string; parent: Path | undefined } | undefined;

const spelled = (path: Path): string => (path === undefined ? "" : path.parent === undefined ? path.key : `${spelled(path.parent)}.${path.key}`);

/**
 * Text that may hold what PostgreSQL cannot store: in JSON, a NUL character or
 * a lone surrogate can only come as a `\u` escape (raw, the one is a syntax
 * error and the other invalid UTF-8). A body without such an escape has no
 * text to check, only its depth.
 */
const MAYBE_UNSTORABLE = /\\u(?:0000|d[89a-f])/i;

/**
 * Finds what PostgreSQL cannot store, so it is a 422 on the field rather than a
 * failed write: NUL characters and lone surrogates (when `texts`), and nesting
 * deeper than any real payload needs.
 */
function unstorable(value: unknown, path: Path, depth: number, texts: boolean, details: ErrorDetail[], tally: { values: number }): void {
  if (details.length >= 20) return;
  tally.values++;
  if (typeof value === "string") {
    const problem = texts ? unstorableText(value) : undefined;
    if (problem) details.push({ path: spelled(path), message: problem });
    return;
  }
  if (typeof value !== "object" || value === null) return;
  if (depth >= MAX_JSON_DEPTH) {
    details.push({ path: spelled(path), message: `must not be nested more than ${MAX_JSON_DEPTH} levels deep` });
    return;
  }
  for (const key in value) {
    const field: Path = { key, parent: path };
    const problem = texts ? unstorableText(key) : undefined;
    if (problem) details.push({ path: spelled(field), message: problem });
    unstorable((value as Record<string, unknown>)[key], field, depth + 1, texts, details, tally);
  }
}

/**
 * What a parsed body may take in memory at most, from its size and its count
 * of values: the bytes as received and as text (up to two bytes a character),
 * and 128 bytes a value, what V8 takes for an empty object in an array or a
 * key of a large object, the costliest shapes (1 MiB of `[{},{},...]` takes
 * 22 MiB). See `BODY_MEMORY_BYTES`.
 */
export const weightOf = (bytes: number, values: number) => 3 * bytes + 128 * values;

/**
 * Reads the body the raw parser buffered as a JSON object, with its weight (see
 * `weightOf`). Its problems are returned, not thrown: they are reported only
 * after authorization.
 */
export function readJsonObject(req: Request): { value: Record<string, unknown>; weight: number } | { problem: AppError } {
  const mediaType = (req.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase();
  if (mediaType !== "application/json") return { problem: new AppError("UNSUPPORTED_MEDIA_TYPE") };
  const raw: unknown = req.body;
  let text: string;
  try {
    text = utf8.decode(Buffer.isBuffer(raw) ? raw : Buffer.alloc(0));
  } catch {
    return { problem: new AppError("MALFORMED_JSON") };
  }
  const tally = { values: 0 };
  const read = jsonObjectOf(text, tally);
  return "problem" in read ? read : { value: read.value, weight: weightOf(text.length, tally.values) };
}

/**
 * One JSON object, as a push's body or an import's line holds it: `MALFORMED_JSON`
 * when the text is not JSON, a 422 when it is not an object or holds what
 * PostgreSQL cannot store.
 */
export function jsonObjectOf(text: string, tally = { values: 0 }): { value: Record<string, unknown> } | { problem: AppError } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { problem: new AppError("MALFORMED_JSON") };
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return { problem: new AppError("VALIDATION_FAILED", [{ path: "", message: "must be a JSON object" }]) };
  }
  const details: ErrorDetail[] = [];
  unstorable(value, undefined, 0, MAYBE_UNSTORABLE.test(text), details, tally);
  if (details.length > 0) return { problem: new AppError("VALIDATION_FAILED", details) };
  return { value: { ...(value as Record<string, unknown>) } };
}
