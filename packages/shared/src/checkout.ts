import { z } from "zod";
import { currencySchema, externalIdSchema, httpUrlSchema, lineItemsSchema, metadataSchema, sourceUpdatedAtSchema, priceSchema, tagsSchema, timestampSchema } from "./common.js";
import { checkoutCustomerInputSchema } from "./customer.js";

export const CHECKOUT_STATUSES = ["active", "abandoned", "recovered", "completed", "expired"] as const;
export const checkoutStatusSchema = z.enum(CHECKOUT_STATUSES);

export const checkoutInputSchema = z.object({
  external_id: externalIdSchema,
  abandoned_at: timestampSchema,
  total_price: priceSchema,
  currency: currencySchema.nullish(),
  recovery_url: httpUrlSchema.nullish(),
  customer: checkoutCustomerInputSchema,
  line_items: lineItemsSchema.nullish(),
  tags: tagsSchema.nullish(),
  metadata: metadataSchema.nullish(),
  source_updated_at: sourceUpdatedAtSchema.optional(),
});

export const checkoutPatchSchema = z.object({
  status: checkoutStatusSchema.optional(),
  recovery_url: httpUrlSchema.nullish(),
  tags: tagsSchema.nullish(),
  metadata: metadataSchema.nullish(),
  source_updated_at: sourceUpdatedAtSchema.optional(),
});

export const checkoutSchema = z
  .object({
    external_id: z.string(),
    store_id: z.number().int(),
    status: checkoutStatusSchema,
    total_price: z.string().meta({ description: "Decimal string with exactly two decimals", example: "89.90" }),
    currency: z.string().nullable(),
    recovery_url: z.string().nullable(),
    tags: z.array(z.string()),
    created_at: z.string().meta({ description: "ISO 8601, milliseconds, numeric offset" }),
  })
  .meta({ id: "Checkout" });

/** A checkout as stored, read back: the published response with what the shop sent. */
export const checkoutRecordSchema = checkoutSchema
  .extend({
    abandoned_at: z.string(),
    customer_external_id: z.string().nullable(),
    line_items: z.array(z.record(z.string(), z.unknown())).nullable(),
    metadata: z.record(z.string(), z.unknown()).nullable(),
    source_updated_at: z.string().nullable(),
    updated_at: z.string(),
  })
  .meta({ id: "CheckoutRecord" });

export type CheckoutRecord = z.infer<typeof checkoutRecordSchema>;
export type CheckoutStatus = z.infer<typeof checkoutStatusSchema>;
export type CheckoutInput = z.input<typeof checkoutInputSchema>;
export type CheckoutPatch = z.input<typeof checkoutPatchSchema>;
export type Checkout = z.infer<typeof checkoutSchema>;
