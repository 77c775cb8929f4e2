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
  ])("%s is %s", (input, expected) => {
    expect(toMoney(input)).toBe(expected);
  });

  it("formats stored values with exactly two decimals", () => {
    expect(formatMoney("5")).toBe("5.00");
    expect(formatMoney("1250.5")).toBe("1250.50");
  });
});
