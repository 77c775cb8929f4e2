import type { ErrorDetail } from "@commerce-ingest/shared";
import { z } from "zod";
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

const shapes = new WeakMap<z.ZodType, Record<string, z.ZodType> | null>();

/** The object schema inside optional/nullable wrappers, if the field is an object (found once per schema). */
function objectShape(schema: z.ZodType): Record<string, z.ZodType> | undefined {
  let shape = shapes.get(schema);
  if (shape === undefined) {
    let inner: z.ZodType = schema;
    while (inner instanceof z.ZodOptional || inner instanceof z.ZodNullable) inner = inner.unwrap() as z.ZodType;
    shape = inner instanceof z.ZodObject ? inner.shape : null;
    shapes.set(schema, shape);
  }
  return shape ?? undefined;
}

/** Dotted paths of the fields the schema does not know (free-form fields, such as metadata, have none). */
export function unknownFields(schema: z.ZodType, value: unknown, prefix = ""): string[] {
  const shape = objectShape(schema);
  if (!shape || !isNode(value) || Array.isArray(value)) return [];
  let unknown: string[] | undefined;
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    // Own fields of the shape only: `constructor` or `__proto__` in a body is as unknown as any other name.
    const known = Object.hasOwn(shape, key) ? shape[key] : undefined;
    const found = known ? unknownFields(known, value[key], `${prefix}${key}.`) : [`${prefix}${key}`];
    if (found.length > 0) (unknown ??= []).push(...found);
  }
  return unknown ?? [];
}

/** What the parser made of a body: its value, and the fields it ignored. */
export type ParsedBody<T> = { value: T; ignored: string[] };

/**
 * The one place a body is checked: its schema (the shared zod schema, which
 * says what each field accepts) and its phones, read in the store's country
 * and normalised to E.164. One 422 names every failing field, phones included.
 * What comes back is the parsed body with its phones in E.164.
 */
export function parseBody<S extends z.ZodType>(
  schema: S,
  phonePaths: readonly PhonePath[],
  raw: unknown,
  country: string | null,
  options: { strict: boolean } = { strict: false },
): ParsedBody<z.output<S>> {
  const result = schema.safeParse(raw);
  const details: ErrorDetail[] = result.success ? [] : toDetails(result.error.issues);
  const ignored = unknownFields(schema, raw);
  // `Prefer: handling=strict`: a field the API does not know (a typo, a read-only field) is an error, not silently dropped.
  if (options.strict) for (const path of ignored) details.push({ path, message: "unknown field" });
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
  return { value: result.data, ignored };
}
