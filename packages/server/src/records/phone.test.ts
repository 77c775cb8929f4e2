import { describe, expect, it } from "vitest";
import { normalizePhone, phoneReader } from "./write-path.js";

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

  it("reads a phone sent again, in the same or another country, as it read it the first time", () => {
    for (let round = 0; round < 2; round++) {
      expect(normalizePhone("020 7946 0958", "GB")).toEqual({ ok: true, e164: "+442079460958" });
      expect(normalizePhone("020 7946 0958", "US")).toEqual({ ok: false, message: "is not a valid phone number" });
      expect(normalizePhone("020 7946 0958", null)).toMatchObject({ ok: false, message: expect.stringMatching(/international format/) });
    }
  });

  it("stays right after more distinct phones than it remembers", () => {
    const read = phoneReader(1_000);
    const phone = (i: number) => `${" ".repeat(Math.floor(i / 900))}+1202555${String(1000 + (i % 900)).slice(-4)}`;
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < 1_010; i++) expect(read(phone(i), "US")).toEqual({ ok: true, e164: phone(i).trim() });
    }
    expect(read("415.555.2671", "US")).toEqual({ ok: true, e164: "+14155552671" });
    expect(read("415.555.2671", "GB")).toMatchObject({ ok: false });
    expect(read("+1 555 000 0000", "US")).toMatchObject({ ok: false });
    expect(read("+14155552671", null)).toEqual({ ok: true, e164: "+14155552671" });
    expect(read("+14155552671", "FR")).toEqual({ ok: true, e164: "+14155552671" });
  });
});
