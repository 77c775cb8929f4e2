import type { ErrorDetail } from "@commerce-ingest/shared";
import type { z } from "zod";
import { AppError } from "../errors.js";
import { toDetails } from "../validation.js";
import { normalizePhone } from "./customers/phone.js";

/** Where a phone sits in a body: `["phone"]`, `["customer", "phone"]`. */
export type PhonePath = readonly string[];

type Node = Record<string, unknown>;
const isNode = (value: unknown): value is Node => typeof value === "object" && value !== null;

function at(value: unknown, path: PhonePath): unknown {
  return path.reduce<unknown>((node, key) => (isNode(node) ? node[key] : undefined), value);
}

function setAt(value: unknown, path: PhonePath, replacement: string): void {
  const parent = at(value, path.slice(0, -1));
  const key = path[path.length - 1];
  if (isNode(parent) && key !== undefined) parent[key] = replacement;
}

/**
 * The one place a body is checked: its schema (the shared zod schema, which
 * says what each field accepts) and its phones, read in the store's country
 * and normalised to E.164. One 422 names every failing field, phones included.
 * What comes back is the parsed body with its phones in E.164.
 */
export function parseBody<S extends z.ZodType>(schema: S, phonePaths: readonly PhonePath[], raw: unknown, country: string | null): z.output<S> {
  const result = schema.safeParse(raw);
  const details: ErrorDetail[] = result.success ? [] : toDetails(result.error.issues);
  const normalized: Array<[PhonePath, string]> = [];
  for (const path of phonePaths) {
    const dotted = path.join(".");
    const phone = at(raw, path);
    if (typeof phone !== "string" || details.some((detail) => detail.path === dotted)) continue;
    const phoneResult = normalizePhone(phone, country);
    if (phoneResult.ok) normalized.push([path, phoneResult.e164]);
    else details.push({ path: dotted, message: phoneResult.message });
  }
  if (!result.success || details.length > 0) throw new AppError("VALIDATION_FAILED", details);
  for (const [path, e164] of normalized) setAt(result.data, path, e164);
  return result.data;
}
