import { z } from "zod";
import {
  currencySchema,
  customerKeyOutputSchema,
  externalIdSchema,
  KEEP_OR_CLEAR,
  LIMITS,
  lineItemsInputSchema,
  lineItemsOutputSchema,
  metadataInputSchema,
  metadataOutputSchema,
  priceSchema,
  sourceUpdatedAtOutputSchema,
  sourceUpdatedAtSchema,
  storedTime,
  tagsInputSchema,
  timestampSchema,
  TOTAL_PRICE,
  TOTAL_PRICE_OUT,
} from "./common.js";
import { customerInputSchema } from "./customer.js";

const status = z.string().max(LIMITS.status);
const financialStatus = status.nullish().meta({
  description: `Your payment status: a free string of at most 64 characters, such as \`pending\`, \`paid\` or \`refunded\`. ${KEEP_OR_CLEAR}`,
  example: "paid",
});
const fulfillmentStatus = status.nullish().meta({
  description: `Your fulfillment status: a free string of at most 64 characters, such as \`unfulfilled\` or \`fulfilled\`. ${KEEP_OR_CLEAR}`,
  example: "fulfilled",
});

export const orderInputSchema = z.object({
  external_id: externalIdSchema.meta({ description: "Your shop's id for the order, 1-255 characters: the upsert key within the store.", example: "1001" }),
  placed_at: timestampSchema.meta({
    description: "When the order was placed: ISO 8601 with `Z` or a numeric offset (a time without a zone is refused).",
    example: "2026-11-20T14:03:00Z",
  }),
  total_price: priceSchema.meta({ description: `The order total. ${TOTAL_PRICE}`, example: 1250.5 }),
  currency: currencySchema.nullish().meta({
    description: `The three-letter ISO 4217 code of the order's currency, stored upper-case. ${KEEP_OR_CLEAR}`,
    example: "USD",
  }),
  financial_status: financialStatus,
  fulfillment_status: fulfillmentStatus,
  customer: customerInputSchema.meta({
    description:
      "Required: the customer who placed the order, upserted with it by the customer key rule and linked to it (its `phone` is required). " +
      "Its `lifetime_value` and `orders_count` update the customer.",
    example: { external_id: "c-1001", phone: "+14155552671", first_name: "Ada", email: "ada@example.com", lifetime_value: 125050, orders_count: 3 },
  }),
  line_items: lineItemsInputSchema,
  tags: tagsInputSchema,
  metadata: metadataInputSchema,
  source_updated_at: sourceUpdatedAtSchema.optional(),
});

export const orderPatchSchema = z.object({
  financial_status: financialStatus,
  fulfillment_status: fulfillmentStatus,
  tags: tagsInputSchema,
  metadata: metadataInputSchema,
  source_updated_at: sourceUpdatedAtSchema.optional(),
});

export const orderSchema = z
  .object({
    external_id: z.string().meta({ description: "Your shop's id for the order.", example: "1001" }),
    store_id: z.number().int().meta({ description: "The id of the store the order belongs to.", example: 1 }),
    total_price: z.string().meta({ description: `The order total. ${TOTAL_PRICE_OUT}`, example: "1250.50" }),
    currency: z.string().nullable().meta({ description: "The ISO 4217 code, upper-case; `null` when never sent or cleared.", example: "USD" }),
    financial_status: z.string().nullable().meta({ description: "Your payment status as last sent; `null` until set, or once cleared.", example: "paid" }),
    fulfillment_status: z.string().nullable().meta({
      description: "Your fulfillment status as last sent; `null` until set, or once cleared.",
      example: "fulfilled",
    }),
    tags: z.array(z.string()).meta({ description: "The order's tags, in the order sent; empty when none.", example: ["vip", "newsletter"] }),
    created_at: storedTime("When the service first stored the order"),
  })
  .meta({ id: "Order" });

/** An order as stored, read back: the published response with what the shop sent. */
export const orderRecordSchema = orderSchema
  .extend({
    placed_at: z.string().meta({
      description: "When the order was placed: ISO 8601 with milliseconds and a numeric offset.",
      example: "2026-11-20T14:03:00.000+00:00",
    }),
    customer_external_id: customerKeyOutputSchema,
    line_items: lineItemsOutputSchema,
    metadata: metadataOutputSchema,
    source_updated_at: sourceUpdatedAtOutputSchema,
    updated_at: storedTime("When the service last changed the order"),
  })
  .meta({ id: "OrderRecord" });

export type OrderRecord = z.infer<typeof orderRecordSchema>;
export type OrderInput = z.input<typeof orderInputSchema>;
export type OrderPatch = z.input<typeof orderPatchSchema>;
export type Order = z.infer<typeof orderSchema>;
