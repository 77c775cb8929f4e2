import { customerInputSchema, LIMITS, lineItemsSchema, metadataSchema, orderInputSchema } from "@commerce-ingest/shared";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { AppError } from "../errors.js";
import { parseBody, readJsonObject } from "./write-path.js";
import { toDetails } from "../validation.js";

function failure(run: () => unknown): AppError {
  try {
    run();
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
  throw new Error("expected a validation failure");
}

describe("parseBody", () => {
  it("names unknown fields at any depth, but not inside free-form metadata", () => {
    const raw = { external_id: "o1", placed_at: "2026-11-22T10:00:00Z", total_price: 1, status: "x", customer: { phone: "+14155552671", nmae: "A" }, metadata: { anything: 1 } };
    expect(parseBody(orderInputSchema, [["customer", "phone"]], raw, "US").ignored).toEqual(["status", "customer.nmae"]);
    const strict = failure(() => parseBody(orderInputSchema, [["customer", "phone"]], raw, "US", { strict: true }));
    expect(strict.details).toEqual([
      { path: "status", message: "unknown field" },
      { path: "customer.nmae", message: "unknown field" },
    ]);
  });

  it("returns the parsed body with its phones in E.164, read in the store's country", () => {
    const body = parseBody(customerInputSchema, [["phone"]], { phone: "(415) 555-2671", first_name: "Ada", unknown: 1 }, "US");
    expect(body).toEqual({ value: { phone: "+14155552671", first_name: "Ada" }, ignored: ["unknown"] });
  });

  it("names every failing field in one 422, phones included", () => {
    const error = failure(() =>
      parseBody(orderInputSchema, [["customer", "phone"]], { external_id: "o1", placed_at: "yesterday", total_price: -1, customer: { phone: "12" } }, "US"),
    );
    expect(error.code).toBe("VALIDATION_FAILED");
    expect(error.details?.map((detail) => detail.path).sort()).toEqual(["customer.phone", "placed_at", "total_price"]);
  });

  it("refuses a national number when the store has no country, saying why", () => {
    const error = failure(() => parseBody(customerInputSchema, [["phone"]], { phone: "4155552671" }, null));
    expect(error.details).toEqual([{ path: "phone", message: expect.stringContaining("international format") }]);
  });

  it("reports a phone of the wrong type once, from the schema", () => {
    const error = failure(() => parseBody(customerInputSchema, [["phone"]], { phone: 4155552671 }, "US"));
    expect(error.details).toEqual([{ path: "phone", message: "must be a string" }]);
  });
});

describe("free-form line items and metadata", () => {
  // What they were checked by: records of any keys and values, metadata within its size once serialised.
  const record = z.record(z.string(), z.unknown());
  const recordItems = z.array(record).max(LIMITS.lineItems);
  const recordMetadata = record.refine((value) => new TextEncoder().encode(JSON.stringify(value)).length <= LIMITS.metadataBytes, {
    message: `must be at most ${LIMITS.metadataBytes} bytes when serialised`,
  });
  const outcome = (schema: z.ZodType, value: unknown) => {
    const result = schema.safeParse(value);
    return result.success ? { ok: true } : { ok: false, details: toDetails(result.error.issues) };
  };
  const large = "x".repeat(LIMITS.metadataBytes + 1);
  const edges = fc.constantFrom<unknown>(large, { note: large }, [large], null, [], [[]], [null, {}], Array.from({ length: LIMITS.lineItems + 1 }, () => ({})), Array(3).fill(large));

  it("refuse what the records refused, with the same details, and keep what was sent as it was sent", () => {
    fc.assert(
      fc.property(fc.oneof(fc.jsonValue(), fc.array(fc.jsonValue(), { maxLength: 5 }), edges), (value) => {
        for (const [now, before] of [
          [lineItemsSchema, recordItems],
          [metadataSchema, recordMetadata],
        ] as const) {
          expect(outcome(now, value)).toEqual(outcome(before, value));
          const parsed = now.safeParse(value);
          if (parsed.success) expect(JSON.stringify(parsed.data)).toBe(JSON.stringify(value));
        }
      }),
      { numRuns: 5_000 },
    );
  });
});

const read = (text: string) => readJsonObject({ headers: { "content-type": "application/json" }, body: Buffer.from(text) });
const paths = (text: string) => {
  const result = read(text);
  return "problem" in result ? result.problem.details?.map((detail) => `${detail.path}: ${detail.message}`) : [];
};

describe("readJsonObject", () => {
  it("names each field PostgreSQL could not store, however its escape is spelled", () => {
    expect(paths(String.raw`{"a":{"b":["ok","x\u0000"]},"c":"\uD83D","d":"\udc00"}`)).toEqual([
      "a.b.1: must not contain the NUL character",
      "c: must be valid Unicode (a lone surrogate was sent)",
      "d: must be valid Unicode (a lone surrogate was sent)",
    ]);
    expect(paths(String.raw`{"line_items":[{"k\uDC00":1}]}`)).toEqual(["line_items.0.k\udc00: must be valid Unicode (a lone surrogate was sent)"]);
  });

  it("accepts text that only looks like such an escape, and a well-formed pair", () => {
    expect(read(String.raw`{"note":"C:\\u0000 and \\ud800","emoji":"\ud83d\ude00"}`)).toEqual({ value: { note: String.raw`C:\u0000 and \ud800`, emoji: "😀" }, weight: expect.any(Number) });
  });

  it("weighs a body by its bytes and its values, what parsing makes of it", () => {
    const text = '{"a":[{},{},{}],"b":"xyz"}';
    expect(read(text)).toMatchObject({ weight: 3 * text.length + 128 * 6 });
  });

  it("refuses nesting deeper than 32 levels, and takes 32", () => {
    const nested = (levels: number) => `${'{"a":'.repeat(levels)}1${"}".repeat(levels)}`;
    expect(paths(nested(33))).toEqual([`${Array(32).fill("a").join(".")}: must not be nested more than 32 levels deep`]);
    expect(paths(nested(32))).toEqual([]);
  });
});
