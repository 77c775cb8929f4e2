import { parsePhoneNumberFromString, type CountryCode } from "libphonenumber-js/max";

export type PhoneResult = { ok: true; e164: string } | { ok: false; message: string };

/**
 * How many phones (as sent, with the country they were read in) the process remembers the reading of: a
 * backfill of a million orders names some 50,000 customers, whose phones then come round again and again.
 * Some 10 MB at most: an entry is the phone's text as it came (kept) and, for a phone sent as it is stored, no more.
 */
export const PHONES_REMEMBERED = 100_000;

/**
 * A reader of phones that remembers its readings, most recently used last: a
 * shop sends one customer's phone again and again (its checkout, its customer,
 * each of its orders), and reading one with the full metadata is the costliest
 * part of checking a body. A reading depends only on the text and (for a phone
 * without `+`) the country, so a remembered one is exactly what reading it
 * again would give.
 */
export function phoneReader(capacity: number): (input: string, defaultCountry: string | null) => PhoneResult {
  /** `true`: valid and already in E.164, the common case, kept without a copy. */
  const readings = new Map<string, PhoneResult | true>();
  return (input, defaultCountry) => {
    // An international phone reads the same in every country: its text alone is its key.
    const key = input.startsWith("+") ? input : `${defaultCountry ?? ""}\u0000${input}`;
    const known = readings.get(key);
    if (known !== undefined) {
      readings.delete(key);
      readings.set(key, known);
      return known === true ? { ok: true, e164: input } : known;
    }
    const result = readPhone(input, defaultCountry);
    if (readings.size >= capacity) readings.delete(readings.keys().next().value as string);
    readings.set(key, result.ok && result.e164 === input ? true : result);
    return result;
  };
}

/**
 * Normalises a phone to E.164. A number without `+` is read in the store's
 * default country; without one it must be international. The full metadata
 * set is used so that impossible numbers (unassigned ranges) are refused, not
 * merely wrong lengths.
 */
export const normalizePhone = phoneReader(PHONES_REMEMBERED);

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
