import { describe, expect, it } from "vitest";
import { normalizePhone } from "./phone.js";

describe("normalizePhone", () => {
  it.each([
    ["+1 (415) 555-2671", null, "+14155552671"],
    ["415.555.2671", "US", "+14155552671"],
    ["020 7946 0958", "GB", "+442079460958"],
    ["+44 20 7946 0958", "US", "+442079460958"],
    ["06 12 34 56 78", "FR", "+33612345678"],
    [" +49 30 901820 ", null, "+4930901820"],
  ])("%s in %s is %s", (input, country, expected) => {
    expect(normalizePhone(input, country)).toEqual({ ok: true, e164: expected });
  });

  it.each([
    ["415 555 2671", null, /international format/],
    ["+1 555 000 0000", null, /not a valid/],
    ["12", "US", /not a valid/],
    ["call +14155552671", "US", /not a valid/],
    ["", "US", /not a valid/],
  ])("refuses %j in %s", (input, country, message) => {
    const result = normalizePhone(input, country);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.message).toMatch(message);
  });
});
