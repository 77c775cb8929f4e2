/**
 * Why PostgreSQL could not store this text, if it could not: the NUL character
 * (text and jsonb refuse it), or a lone UTF-16 surrogate (jsonb refuses it).
 */
export function unstorableText(text: string): string | undefined {
  if (text.includes("\u0000")) return "must not contain the NUL character";
  if (!text.isWellFormed()) return "must be valid Unicode (a lone surrogate was sent)";
  return undefined;
}

/** A string as a jsonb column can hold it: each lone surrogate and NUL character replaced by U+FFFD. */
const storable = (text: string) => (unstorableText(text) === undefined ? text : text.toWellFormed().replaceAll("\u0000", "\uFFFD"));

/**
 * `value` as JSON that a jsonb column takes whatever it holds: a refusal's
 * details name what was sent (a key with a lone surrogate, say), which jsonb
 * would refuse, and with it every row of the statement that writes them.
 */
export function storableJson(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) => {
    if (typeof item === "string") return storable(item);
    if (item === null || typeof item !== "object" || Array.isArray(item) || Object.keys(item).every((key) => unstorableText(key) === undefined)) return item;
    return Object.fromEntries(Object.entries(item).map(([key, inner]) => [storable(key), inner]));
  });
}
