import { checkoutPatchSchema, orderPatchSchema } from "@commerce-ingest/shared";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { IMPORT_WRITES } from "../imports/kinds.js";
import { acceptedValue } from "./accepted.js";
import "../validation.js";

/** A value as text, every key in its order and an `undefined` field told from an absent one. */
const text = (value: unknown) => JSON.stringify(value, (_key, field: unknown) => (field === undefined ? "<undefined>" : field));

/** What a field may be sent as: right or wrong for it, of every JSON type, at and past the limits. */
const anyField = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.string({ minLength: 250, maxLength: 260 }),
  fc.double(),
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.date({ noInvalidDate: true, min: new Date("0000-01-01T00:00:00Z") }).map((date) => date.toISOString()),
  fc.constantFrom("2026-11-20T14:03:00+02:00", "2026-11-20T14:03:00", "2026-11-20T14:03:00-15:59", "2026-11-20T14:03:00+16:00", "0000-12-31T00:00:00Z"),
  fc.stringMatching(/^[A-Za-z]{2,4}$/),
  fc.constantFrom("+14155552671", "(415) 555-2671", "ada@example.com", "ada@", "paid", "abandoned", "recovered", "delivered", "https://example.com/x", "ftp://x"),
  fc.array(fc.string({ maxLength: 4 }), { maxLength: 4 }),
  fc.array(fc.dictionary(fc.string({ maxLength: 3 }), fc.jsonValue({ maxDepth: 1 })), { maxLength: 3 }),
  fc.jsonValue({ maxDepth: 2 }),
  fc.constantFrom(Array<string>(251).fill("t"), Array<object>(1001).fill({})),
);

type Body = Record<string, unknown>;

/** Every field's path in a body, nested objects' fields included. */
function pathsOf(body: Body, prefix: string[] = []): string[][] {
  return Object.entries(body).flatMap(([key, value]) =>
    typeof value === "object" && value !== null && !Array.isArray(value) ? [[...prefix, key], ...pathsOf(value as Body, [...prefix, key])] : [[...prefix, key]],
  );
}

/** A body near `example`: each field kept, left out, or sent as anything, and fields the schema does not know added. */
function nearby(example: Body): fc.Arbitrary<unknown> {
  const paths = pathsOf(example);
  const change = fc.oneof({ weight: 12, arbitrary: fc.constant({ keep: true as const }) }, { weight: 1, arbitrary: fc.constant({ drop: true as const }) }, { weight: 2, arbitrary: anyField.map((value) => ({ value })) });
  const body = fc.tuple(fc.array(change, { minLength: paths.length, maxLength: paths.length }), fc.dictionary(fc.constantFrom("extra", "constructor", "toString", "__proto__", "id"), anyField, { maxKeys: 2 })).map(([changes, extra]) => {
    const copy = structuredClone(example);
    paths.forEach((path, index) => {
      const what = changes[index];
      const parent = path.slice(0, -1).reduce<unknown>((node, key) => (typeof node === "object" && node !== null ? (node as Body)[key] : undefined), copy);
      const key = path[path.length - 1] as string;
      if (typeof parent !== "object" || parent === null || Array.isArray(parent) || !what || "keep" in what) return;
      if ("drop" in what) delete (parent as Body)[key];
      else (parent as Body)[key] = what.value;
    });
    // Through JSON text, as a body arrives: `__proto__` an own field, as JSON.parse makes it.
    return JSON.parse(JSON.stringify({ ...copy, ...extra }).replace('"extra":', '"__proto__":')) as unknown;
  });
  return fc.oneof({ weight: 8, arbitrary: body }, { weight: 1, arbitrary: anyField });
}

const schemas: Array<[string, z.ZodType, Body]> = [
  ...Object.entries(IMPORT_WRITES).map(([kind, spec]): [string, z.ZodType, Body] => [kind, spec.body, spec.example as Body]),
  ["order patch", orderPatchSchema, { financial_status: "paid", fulfillment_status: null, tags: ["a"], metadata: { a: 1 }, source_updated_at: "2026-11-20T14:05:00Z" }],
  ["checkout patch", checkoutPatchSchema, { status: "recovered", tags: ["a"], metadata: { a: 1 }, source_updated_at: "2026-11-20T14:05:00Z" }],
];

/**
 * Bodies near `example`, each held to zod: accepted exactly when zod accepts it, with the same value. Answers how
 * many were accepted.
 */
function holdsToZod(schema: z.ZodType, example: Body, numRuns: number): number {
  let accepted = 0;
  fc.assert(
    fc.property(nearby(example), (body) => {
      const parsed = schema.safeParse(body);
      const found = acceptedValue(schema, body);
      expect(found !== undefined).toBe(parsed.success);
      if (found && parsed.success) {
        expect(text(found.value)).toBe(text(parsed.data));
        accepted++;
      }
    }),
    { numRuns },
  );
  return accepted;
}

describe("a body's accepted value", () => {
  it.each(schemas)("is what zod makes of a %s body it accepts, and nothing for one it refuses", (_name, schema, example) => {
    // The bodies tried include many that are accepted, not only refusals.
    expect(holdsToZod(schema, example, 3_000)).toBeGreaterThan(150);
  });

  it("is what zod makes of bodies of any shape of schema, and nothing for one it refuses", () => {
    // What the service's schemas do not hold yet, held to zod all the same: a field that takes `undefined` but must be
    // present, defaults, exact optionals, objects that keep or refuse unknown fields or check themselves.
    const edges = z.object({
      present: z.custom<unknown>(() => true),
      defaulted: z.string().default("d"),
      maybeDefaulted: z.string().default("d").optional(),
      exact: z.exactOptional(z.number()),
      loose: z.looseObject({ a: z.string().optional() }).optional(),
      strict: z.strictObject({ a: z.number().nullable() }).optional(),
      checked: z.object({ a: z.number(), b: z.number() }).refine((value) => value.a < value.b).optional(),
      items: z.array(z.string().optional()).max(2).optional(),
      either: z.union([z.string(), z.number()]).nullish(),
    });
    const example: Body = { present: 1, defaulted: "x", maybeDefaulted: "y", exact: 1, loose: { a: "a", b: 1 }, strict: { a: null }, checked: { a: 1, b: 2 }, items: ["a"], either: 1 };
    expect(holdsToZod(edges, example, 3_000)).toBeGreaterThan(150);
  });

  it("is what zod makes of a body whose schema holds itself", () => {
    const node: z.ZodType<{ name: string; children?: unknown[] }> = z.object({
      name: z.string().max(3),
      get children() {
        return z.array(node).max(2).optional();
      },
    });
    expect(holdsToZod(node, { name: "a", children: [{ name: "b", children: [{ name: "c" }] }] }, 1_000)).toBeGreaterThan(50);
  });
});
