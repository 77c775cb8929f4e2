/**
 * Why PostgreSQL could not store this text, if it could not: the NUL character
 * (text and jsonb refuse it), or a lone UTF-16 surrogate (jsonb refuses it).
 */
export function unstorableText(text: string): string | undefined {
  if (text.includes("\u0000")) return "must not contain the NUL character";
  if (!text.isWellFormed()) return "must be valid Unicode (a lone surrogate was sent)";
  return undefined;
}
