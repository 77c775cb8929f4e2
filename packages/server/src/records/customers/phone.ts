import { parsePhoneNumberFromString, type CountryCode } from "libphonenumber-js/max";

export type PhoneResult = { ok: true; e164: string } | { ok: false; message: string };

/** How many phones (as sent, with the country they were read in) the process remembers the reading of. */
export const PHONES_REMEMBERED = 10_000;

/**
 * Readings already made, most recently used last: a shop sends one customer's
 * phone again and again (its checkout, its customer, each of its orders), and
 * reading one with the full metadata is the costliest part of checking a body.
 * A reading depends only on the text and the country, so a remembered one is
 * exactly what reading it again would give.
 */
const readings = new Map<string, PhoneResult>();

/**
 * Normalises a phone to E.164. A number without `+` is read in the store's
 * default country; without one it must be international. The full metadata
 * set is used so that impossible numbers (unassigned ranges) are refused, not
 * merely wrong lengths.
 */
export function normalizePhone(input: string, defaultCountry: string | null): PhoneResult {
  const key = `${defaultCountry ?? ""}\u0000${input}`;
  const known = readings.get(key);
  if (known) {
    readings.delete(key);
    readings.set(key, known);
    return known;
  }
  const result = readPhone(input, defaultCountry);
  if (readings.size >= PHONES_REMEMBERED) readings.delete(readings.keys().next().value as string);
  readings.set(key, result);
  return result;
}

function readPhone(input: string, defaultCountry: string | null): PhoneResult {
  const text = input.trim();
  const international = text.startsWith("+");
  if (!international && !defaultCountry) {
    return { ok: false, message: "must be in international format (+ and country code): the store has no default country" };
  }
  const parsed = parsePhoneNumberFromString(text, {
    defaultCountry: international ? undefined : (defaultCountry as CountryCode),
    extract: false,
  });
  if (!parsed || !parsed.isValid()) return { ok: false, message: "is not a valid phone number" };
  return { ok: true, e164: parsed.number };
}
