import { z } from "zod";

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
} as const;

export const externalIdSchema = z.string().min(1).max(LIMITS.externalId);

export const tagsSchema = z.array(z.string().min(1).max(LIMITS.tagLength)).max(LIMITS.tags);

const utf8 = new TextEncoder();

export const metadataSchema = z
  .record(z.string(), z.unknown())
  .refine((value) => utf8.encode(JSON.stringify(value)).length <= LIMITS.metadataBytes, {
    message: `must be at most ${LIMITS.metadataBytes} bytes when serialised`,
  });

export const lineItemsSchema = z.array(z.record(z.string(), z.unknown())).max(LIMITS.lineItems);

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
  description: "When your shop last changed this record (ISO 8601 with a zone). A write older than the stored one is not applied: 200 with the stored record and `X-Stale-Write: ignored`.",
});

export const currencySchema = z.string().regex(/^[A-Za-z]{3}$/, "must be a three-letter ISO 4217 code");

export const priceSchema = z.number().min(0).max(LIMITS.maxPrice);

export const httpUrlSchema = z.url({ protocol: /^https?$/ }).max(LIMITS.url);

export const nonNegativeIntSchema = z.number().int().min(0);

/** One entry of `details` on a 422. */
export const errorDetailSchema = z.object({
  path: z.string(),
  message: z.string(),
});

export const errorBodySchema = z
  .object({
    error: z.string(),
    details: z.array(errorDetailSchema).optional(),
  })
  .meta({ id: "Error" });

export type ErrorDetail = z.infer<typeof errorDetailSchema>;
export type ErrorBody = z.infer<typeof errorBodySchema>;
