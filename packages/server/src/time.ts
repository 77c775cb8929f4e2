/** The contract's timestamp format: ISO 8601, milliseconds, numeric offset, never `Z`. */
export function formatTimestamp(date: Date): string {
  return date.toISOString().replace(/Z$/, "+00:00");
}
