import { Decimal } from "decimal.js";

/**
 * A JSON number as money: rounded half-up to two decimals in decimal
 * arithmetic (1.005 becomes "1.01", which binary floats would make "1.00").
 * The number's shortest round-trip text is the decimal the caller wrote.
 */
export function toMoney(value: number): string {
  return new Decimal(String(value)).toDecimalPlaces(2, Decimal.ROUND_HALF_UP).toFixed(2);
}

/** A numeric column's text as the contract's money string: exactly two decimals. */
export function formatMoney(value: string): string {
  return new Decimal(value).toFixed(2);
}
