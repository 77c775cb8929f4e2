import { parsePhoneNumberFromString, type CountryCode } from "libphonenumber-js/max";

export type PhoneResult = { ok: true; e164: string } | { ok: false; message: string };

/**
 * Normalises a phone to E.164. A number without `+` is read in the store's
 * default country; without one it must be international. The full metadata
 * set is used so that impossible numbers (unassigned ranges) are refused, not
 * merely wrong lengths.
 */
export function normalizePhone(input: string, defaultCountry: string | null): PhoneResult {
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
