import type { Request } from "express";
import type { ErrorDetail } from "@commerce-ingest/shared";
import { AppError } from "../errors.js";
import { unstorableText } from "../text.js";

export const MAX_JSON_DEPTH = 32;

const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * Finds what PostgreSQL cannot store, so it is a 422 on the field rather than a
 * failed write: NUL characters and lone surrogates, and nesting deeper than
 * any real payload needs.
 */
function unstorable(value: unknown, path: string[], details: ErrorDetail[]): void {
  if (details.length >= 20) return;
  if (typeof value === "string") {
    const problem = unstorableText(value);
    if (problem) details.push({ path: path.join("."), message: problem });
    return;
  }
  if (typeof value !== "object" || value === null) return;
  if (path.length >= MAX_JSON_DEPTH) {
    details.push({ path: path.join("."), message: `must not be nested more than ${MAX_JSON_DEPTH} levels deep` });
    return;
  }
  for (const [key, inner] of Object.entries(value)) {
    const problem = unstorableText(key);
    if (problem) details.push({ path: [...path, key].join("."), message: problem });
    unstorable(inner, [...path, key], details);
  }
}

/**
 * Reads the body the raw parser buffered as a JSON object. Its problems are
 * returned, not thrown: they are reported only after authorization.
 */
export function readJsonObject(req: Request): { value: Record<string, unknown> } | { problem: AppError } {
  const mediaType = (req.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase();
  if (mediaType !== "application/json") return { problem: new AppError("UNSUPPORTED_MEDIA_TYPE") };
  const raw: unknown = req.body;
  let value: unknown;
  try {
    value = JSON.parse(utf8.decode(Buffer.isBuffer(raw) ? raw : Buffer.alloc(0)));
  } catch {
    return { problem: new AppError("MALFORMED_JSON") };
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return { problem: new AppError("VALIDATION_FAILED", [{ path: "", message: "must be a JSON object" }]) };
  }
  const details: ErrorDetail[] = [];
  unstorable(value, [], details);
  if (details.length > 0) return { problem: new AppError("VALIDATION_FAILED", details) };
  return { value: { ...(value as Record<string, unknown>) } };
}
