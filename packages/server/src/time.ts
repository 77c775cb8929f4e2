/** The contract's timestamp format: ISO 8601, milliseconds, numeric offset, never `Z`. */
export function formatTimestamp(date: Date): string {
  return date.toISOString().replace(/Z$/, "+00:00");
}

/** The same, for a time that may not be there. */
export function formatOptionalTimestamp(date: Date | null): string | null {
  return date ? formatTimestamp(date) : null;
}
