import { z } from "zod";
import { ERRORS, type ErrorWireCode } from "./errors.js";

/** Bounds from the published Limits table and the contract. */
export const LIMITS = {
  externalId: 255,
  name: 255,
  locale: 10,
  status: 64,
  url: 1024,
  tagLength: 255,
  tags: 250,
  metadataBytes: 16 * 1024,
  lineItems: 1000,
  maxPrice: 999_999_999_999.99,
  phone: 64,
  /** Records in one batch request. */
  batchItems: 1000,
  /** Records of a batch that cost one unit of the rate limit, as one request does: a batch of 1,000 costs 4. */
  recordsPerRateUnit: 250,
  /** Lines of an import merged together: one chunk, written as one batch is. */
  importChunkLines: 2000,
} as const;

export const externalIdSchema = z.string().min(1).max(LIMITS.externalId);

export const tagsSchema = z.array(z.string().min(1).max(LIMITS.tagLength)).max(LIMITS.tags);

const utf8 = new TextEncoder();

/**
 * Any JSON object, taken as it came: free-form line items and metadata are stored as sent, so there is nothing in
 * them to check but that each is an object, and nothing to copy. A record schema reads each key and value anew
 * (about 1.5 µs an order of two line items, two fifths of checking its whole body). Refused as a record is, and
 * documented as one.
 */
export const jsonObjectSchema = z
  .custom<Record<string, unknown>>((value) => typeof value === "object" && value !== null && !Array.isArray(value), { message: "must be a record", abort: true })
  .meta({ override: { type: "object", propertyNames: { type: "string" }, additionalProperties: {} } });

export const metadataSchema = jsonObjectSchema
  .refine((value) => utf8.encode(JSON.stringify(value)).length <= LIMITS.metadataBytes, {
    message: `must be at most ${LIMITS.metadataBytes} bytes when serialised`,
  });

export const lineItemsSchema = z.array(jsonObjectSchema).max(LIMITS.lineItems);

/** ISO 8601 with `Z` or a numeric offset; a date-time without a zone is ambiguous and refused. */
export const timestampSchema = z.iso
  .datetime({ offset: true })
  .refine((value) => !value.startsWith("0000"), { message: "must be a date-time from year 0001 on" })
  // Real offsets lie within -12:00..+14:00; PostgreSQL refuses anything from ±16:00 on.
  .refine((value) => Number(/([+-])(\d{2}):\d{2}$/.exec(value)?.[2] ?? 0) <= 15, { message: "must have a UTC offset between -15:59 and +15:59" });

/**
 * When the shop last changed the record, as it says: a write older than the
 * stored one is not applied (answered 200 with the stored record and
 * `X-Stale-Write: ignored`), so webhooks that arrive out of order do no harm.
 */
export const sourceUpdatedAtSchema = timestampSchema.meta({
  description:
    "When your shop last changed this record: ISO 8601 with `Z` or a numeric offset (a time without a zone is refused). " +
    "A write older than the stored one is not applied: 200 with the stored record and `X-Stale-Write: ignored`.",
  example: "2026-11-20T14:05:00Z",
});

export const currencySchema = z.string().regex(/^[A-Za-z]{3}$/, "must be a three-letter ISO 4217 code");

export const priceSchema = z.number().min(0).max(LIMITS.maxPrice);

/** Said of `total_price` wherever a total is sent. */
export const TOTAL_PRICE =
  "A JSON number in the currency's major unit (`1250.5`), from 0 to 999,999,999,999.99. Stored and returned as a string with two decimals, " +
  "rounded half-up (`19.999` becomes `\"20.00\"`; a currency with three decimals loses its third).";

/** Said of `total_price` wherever a total is returned. */
export const TOTAL_PRICE_OUT = "A decimal string with exactly two decimals in the currency's major unit, rounded half-up from the number sent.";

export const httpUrlSchema = z.url({ protocol: /^https?$/ }).max(LIMITS.url);

export const nonNegativeIntSchema = z.number().int().min(0);

/** The merge rule of every optional field of a write, said on each. */
export const KEEP_OR_CLEAR = "Leave it out to keep the stored value; `null` clears it.";

/** When the service stored or changed a record, as responses write times. */
export const storedTime = (what: string) =>
  z.string().meta({ description: `${what}: ISO 8601 with milliseconds and a numeric offset.`, example: "2026-11-22T09:30:00.000+00:00" });

/** One entry of `details` on a 422. */
export const errorDetailSchema = z.object({
  path: z.string().meta({ description: "The failing field's dotted path; array items by index.", example: "customer.phone" }),
  message: z.string().meta({ description: "What is wrong with it.", example: "is not a valid phone number" }),
});

/** Every stable error code, as error bodies carry them. */
const errorCodes = Object.values(ERRORS).map((entry) => entry.code) as [ErrorWireCode, ...ErrorWireCode[]];

export const errorBodySchema = z
  .object({
    error: z.string().meta({ description: "The error's message, exactly as the operation lists it. Meant for people: it may be reworded; branch on `code`.", example: "Invalid request body" }),
    code: z.enum(errorCodes).meta({
      description: `Stable across releases: what clients branch on. Each code, whether retrying the same request can help, and what it means:\n\n${Object.values(ERRORS)
        .map((entry) => `- \`${entry.code}\` (${entry.status}; ${entry.retry ? "retry can help" : "do not retry unchanged"}): ${entry.meaning}`)
        .join("\n")}`,
      example: "validation_failed",
    }),
    details: z
      .array(errorDetailSchema)
      .optional()
      .meta({ description: "On a 422 only: one entry per failing field.", example: [{ path: "customer.phone", message: "is not a valid phone number" }] }),
  })
  .meta({ id: "Error" });

export type ErrorDetail = z.infer<typeof errorDetailSchema>;
export type ErrorBody = z.infer<typeof errorBodySchema>;

// The fields several resources share, described once: as a write takes them, and as a read-back returns them.

/** `tags` in a write body. */
export const tagsInputSchema = tagsSchema.nullish().meta({
  description: `Replace the stored tags when sent (never merged): at most 250 tags of 1-255 characters, kept in order with repeats dropped. ${KEEP_OR_CLEAR}`,
  example: ["vip", "newsletter"],
});

/** `metadata` in a write body. */
export const metadataInputSchema = metadataSchema.nullish().meta({
  description: `Any JSON object, at most 16 KB serialised; replaces the stored metadata when sent (never merged). ${KEEP_OR_CLEAR}`,
  example: { channel: "web" },
});

/** `line_items` in a write body. */
export const lineItemsInputSchema = lineItemsSchema.nullish().meta({
  description: `Free-form line items: an array of at most 1,000 JSON objects of any shape, stored as sent. ${KEEP_OR_CLEAR}`,
  example: [{ sku: "TSHIRT-M", quantity: 2, price: 19.9 }],
});

/** What a read-back returns of what the shop sent beside the published fields. */
export const lineItemsOutputSchema = z
  .array(z.record(z.string(), z.unknown()))
  .nullable()
  .meta({ description: "The line items as sent; `null` when never sent or cleared.", example: [{ sku: "TSHIRT-M", quantity: 2, price: 19.9 }] });

export const metadataOutputSchema = z
  .record(z.string(), z.unknown())
  .nullable()
  .meta({ description: "The metadata as sent; `null` when never sent or cleared.", example: { channel: "web" } });

export const sourceUpdatedAtOutputSchema = z.string().nullable().meta({
  description: "The newest `source_updated_at` applied, with milliseconds and a numeric offset; `null` when none was sent.",
  example: "2026-11-20T14:05:00.000+00:00",
});

/** An order's or a checkout's link to its customer, read back. */
export const customerKeyOutputSchema = z.string().nullable().meta({
  description: "The linked customer's key: its `external_id`, or its E.164 phone when it has none (`null` once such a phone-keyed customer is erased).",
  example: "c-1001",
});
