import { z } from "zod";
import {
  currencySchema,
  customerKeyOutputSchema,
  externalIdSchema,
  httpUrlSchema,
  KEEP_OR_CLEAR,
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
import { checkoutCustomerInputSchema } from "./customer.js";

export const CHECKOUT_STATUSES = ["active", "abandoned", "recovered", "completed", "expired"] as const;
export const checkoutStatusSchema = z.enum(CHECKOUT_STATUSES);

const recoveryUrl = httpUrlSchema.nullish().meta({
  description: `Where the customer resumes the checkout (sent in the recovery message): an http(s) URL of at most 1,024 characters. ${KEEP_OR_CLEAR}`,
  example: "https://shop.example/checkouts/chk-5521/recover",
});

export const checkoutInputSchema = z.object({
  external_id: externalIdSchema.meta({
    description: "Your shop's id for the checkout (its token), 1-255 characters: the upsert key within the store.",
    example: "chk-5521",
  }),
  abandoned_at: timestampSchema.meta({
    description: "When the checkout was abandoned: ISO 8601 with `Z` or a numeric offset (a time without a zone is refused).",
    example: "2026-11-20T13:40:00Z",
  }),
  total_price: priceSchema.meta({ description: `The checkout total. ${TOTAL_PRICE}`, example: 1250.5 }),
  currency: currencySchema.nullish().meta({
    description: `The three-letter ISO 4217 code of the checkout's currency, stored upper-case. ${KEEP_OR_CLEAR}`,
    example: "USD",
  }),
  recovery_url: recoveryUrl,
  customer: checkoutCustomerInputSchema.meta({
    description:
      "Required: the customer, upserted with the checkout by the customer key rule and linked to it (its `phone` is required; " +
      "no `lifetime_value` or `orders_count` here).",
    example: { external_id: "c-1001", phone: "+14155552671", first_name: "Ada", email: "ada@example.com" },
  }),
  line_items: lineItemsInputSchema,
  tags: tagsInputSchema,
  metadata: metadataInputSchema,
  source_updated_at: sourceUpdatedAtSchema.optional(),
});

export const checkoutPatchSchema = z.object({
  status: checkoutStatusSchema.optional().meta({
    description:
      "The new state: one of `active`, `abandoned`, `recovered`, `completed`, `expired`. Entering `abandoned` schedules a recovery message; " +
      "leaving it cancels a pending one. Leave it out to keep the state (`null` is refused).",
    example: "recovered",
  }),
  recovery_url: recoveryUrl,
  tags: tagsInputSchema,
  metadata: metadataInputSchema,
  source_updated_at: sourceUpdatedAtSchema.optional(),
});

export const checkoutSchema = z
  .object({
    external_id: z.string().meta({ description: "Your shop's id for the checkout.", example: "chk-5521" }),
    store_id: z.number().int().meta({ description: "The id of the store the checkout belongs to.", example: 1 }),
    status: checkoutStatusSchema.meta({
      description:
        "The checkout's state: one of `active`, `abandoned`, `recovered`, `completed`, `expired`. The upsert always stores `abandoned` " +
        "(a re-push turns `active` into `abandoned` and keeps any other state); a PATCH moves it.",
      example: "abandoned",
    }),
    total_price: z.string().meta({ description: `The checkout total. ${TOTAL_PRICE_OUT}`, example: "1250.50" }),
    currency: z.string().nullable().meta({ description: "The ISO 4217 code, upper-case; `null` when never sent or cleared.", example: "USD" }),
    recovery_url: z.string().nullable().meta({
      description: "Where the customer resumes the checkout; `null` when never sent or cleared.",
      example: "https://shop.example/checkouts/chk-5521/recover",
    }),
    tags: z.array(z.string()).meta({ description: "The checkout's tags, in the order sent; empty when none.", example: ["vip", "newsletter"] }),
    created_at: storedTime("When the service first stored the checkout"),
  })
  .meta({ id: "Checkout" });

/** A checkout as stored, read back: the published response with what the shop sent. */
export const checkoutRecordSchema = checkoutSchema
  .extend({
    abandoned_at: z.string().meta({
      description: "When the checkout was abandoned: ISO 8601 with milliseconds and a numeric offset.",
      example: "2026-11-20T13:40:00.000+00:00",
    }),
    customer_external_id: customerKeyOutputSchema,
    line_items: lineItemsOutputSchema,
    metadata: metadataOutputSchema,
    source_updated_at: sourceUpdatedAtOutputSchema,
    updated_at: storedTime("When the service last changed the checkout"),
  })
  .meta({ id: "CheckoutRecord" });

export type CheckoutRecord = z.infer<typeof checkoutRecordSchema>;
export type CheckoutStatus = z.infer<typeof checkoutStatusSchema>;
export type CheckoutInput = z.input<typeof checkoutInputSchema>;
export type CheckoutPatch = z.input<typeof checkoutPatchSchema>;
export type Checkout = z.infer<typeof checkoutSchema>;
