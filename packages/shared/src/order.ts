import { z } from "zod";
import { currencySchema, externalIdSchema, LIMITS, lineItemsSchema, metadataSchema, sourceUpdatedAtSchema, priceSchema, tagsSchema, timestampSchema } from "./common.js";
import { customerInputSchema } from "./customer.js";

const status = z.string().max(LIMITS.status);

export const orderInputSchema = z.object({
  external_id: externalIdSchema,
  placed_at: timestampSchema,
  total_price: priceSchema,
  currency: currencySchema.nullish(),
  financial_status: status.nullish(),
  fulfillment_status: status.nullish(),
  customer: customerInputSchema,
  line_items: lineItemsSchema.nullish(),
  tags: tagsSchema.nullish(),
  metadata: metadataSchema.nullish(),
  source_updated_at: sourceUpdatedAtSchema.optional(),
});

export const orderPatchSchema = z.object({
  financial_status: status.nullish(),
  fulfillment_status: status.nullish(),
  tags: tagsSchema.nullish(),
  metadata: metadataSchema.nullish(),
  source_updated_at: sourceUpdatedAtSchema.optional(),
});

export const orderSchema = z
  .object({
    external_id: z.string(),
    store_id: z.number().int(),
    total_price: z.string().meta({ description: "Decimal string with exactly two decimals", example: "1250.50" }),
    currency: z.string().nullable(),
    financial_status: z.string().nullable(),
    fulfillment_status: z.string().nullable(),
    tags: z.array(z.string()),
    created_at: z.string().meta({ description: "ISO 8601, milliseconds, numeric offset", example: "2026-11-22T09:30:00.000+00:00" }),
  })
  .meta({ id: "Order" });

/** An order as stored, read back: the published response with what the shop sent. */
export const orderRecordSchema = orderSchema
  .extend({
    placed_at: z.string().meta({ description: "ISO 8601, milliseconds, numeric offset" }),
    customer_external_id: z.string().nullable().meta({ description: "The linked customer's key (its E.164 phone when it has no external_id); null once erased" }),
    line_items: z.array(z.record(z.string(), z.unknown())).nullable(),
    metadata: z.record(z.string(), z.unknown()).nullable(),
    source_updated_at: z.string().nullable(),
    updated_at: z.string(),
  })
  .meta({ id: "OrderRecord" });

export type OrderRecord = z.infer<typeof orderRecordSchema>;
export type OrderInput = z.input<typeof orderInputSchema>;
export type OrderPatch = z.input<typeof orderPatchSchema>;
export type Order = z.infer<typeof orderSchema>;
