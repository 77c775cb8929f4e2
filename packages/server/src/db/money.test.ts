import { Decimal } from "decimal.js";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { formatMoney, toMoney } from "./sql.js";

describe("money", () => {
  it.each([
    [0, "0.00"],
    [1, "1.00"],
    [1.005, "1.01"],
    [19.999, "20.00"],
    [0.1 + 0.2, "0.30"],
    [1234567.891, "1234567.89"],
    [2.675, "2.68"],
    [1e-7, "0.00"],
    [999999999999.99, "999999999999.99"],
    [19.5, "19.50"],
    [4.25, "4.25"],
    [1e21, "1000000000000000000000.00"],
    [-0, "0.00"],
  ])("%s is %s", (input, expected) => {
    expect(toMoney(input)).toBe(expected);
  });

  it("gives every number what decimal arithmetic gives it, prices of two decimals or fewer included", () => {
    const decimal = (value: number) => new Decimal(String(value)).toDecimalPlaces(2, Decimal.ROUND_HALF_UP).toFixed(2);
    const cents = fc.integer({ min: 0, max: 99_999_999_999_999 }).map((n) => n / 100);
    const tenths = fc.integer({ min: 0, max: 9_999_999_999_999 }).map((n) => n / 10);
    fc.assert(fc.property(fc.oneof(cents, tenths, fc.double({ min: 0, max: 999_999_999_999.99, noNaN: true })), (value) => toMoney(value) === decimal(value)), { numRuns: 20_000 });
  });

  it("formats stored values with exactly two decimals", () => {
    expect(formatMoney("5")).toBe("5.00");
    expect(formatMoney("1250.5")).toBe("1250.50");
  });
});
