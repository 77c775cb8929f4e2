import type { Request } from "express";
import { describe, expect, it } from "vitest";
import { readJsonObject } from "./json-body.js";

const read = (text: string) => readJsonObject({ headers: { "content-type": "application/json" }, body: Buffer.from(text) } as unknown as Request);
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
