/** The store a request is authorized for, as services see it. */
export type StoreContext = {
  id: number;
  teamId: number;
  /** ISO 3166 alpha-2: phones without `+` are read in this country. */
  country: string | null;
  recoveryDelaySeconds: number;
};

/** A positive integer that fits the id column exactly; anything else names no store. */
export function parseStoreId(value: unknown): number | undefined {
  const text = typeof value === "number" ? String(value) : value;
  if (typeof text !== "string" || !/^[1-9][0-9]{0,15}$/.test(text)) return undefined;
  const id = Number(text);
  return Number.isSafeInteger(id) ? id : undefined;
}
