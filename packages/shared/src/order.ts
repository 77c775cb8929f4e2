import { z } from "zod";
import {
  currencySchema,
  externalIdSchema,
  httpUrlSchema,
  LIMITS,
  lineItemsSchema,
  metadataSchema,
  priceSchema,
  tagsSchema,
  timestampSchema,
} from "./common.js";
import { checkoutCustomerInputSchema, customerInputSchema } from "./customer.js";

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
});

export const orderPatchSchema = z.object({
  financial_status: status.nullish(),
  fulfillment_status: status.nullish(),
  tags: tagsSchema.nullish(),
  metadata: metadataSchema.nullish(),
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
});

export const checkoutPatchSchema = z.object({
  status: checkoutStatusSchema.optional(),
  recovery_url: httpUrlSchema.nullish(),
  tags: tagsSchema.nullish(),
  metadata: metadataSchema.nullish(),
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

export const SHIPMENT_STATUSES = ["pending", "in_transit", "delivered", "failed", "returned"] as const;
export const shipmentStatusSchema = z.enum(SHIPMENT_STATUSES);

export const shipmentInputSchema = z.object({
  external_id: externalIdSchema,
  order_external_id: externalIdSchema,
  tracking_number: z.string().max(LIMITS.name).nullish(),
  tracking_url: httpUrlSchema.nullish(),
  carrier: z.string().max(LIMITS.name).nullish(),
  status: shipmentStatusSchema.nullish(),
  metadata: metadataSchema.nullish(),
});

export const shipmentSchema = z
  .object({
    external_id: z.string(),
    store_id: z.number().int(),
    order_id: z.number().int().meta({ description: "The service's internal id of the linked order" }),
    tracking_number: z.string().nullable(),
    tracking_url: z.string().nullable(),
    carrier: z.string().nullable(),
    status: shipmentStatusSchema.nullable(),
  })
  .meta({ id: "Shipment" });

export type OrderInput = z.input<typeof orderInputSchema>;
export type OrderPatch = z.input<typeof orderPatchSchema>;
export type Order = z.infer<typeof orderSchema>;
export type CheckoutStatus = z.infer<typeof checkoutStatusSchema>;
export type CheckoutInput = z.input<typeof checkoutInputSchema>;
export type CheckoutPatch = z.input<typeof checkoutPatchSchema>;
export type Checkout = z.infer<typeof checkoutSchema>;
export type ShipmentStatus = z.infer<typeof shipmentStatusSchema>;
export type ShipmentInput = z.input<typeof shipmentInputSchema>;
export type Shipment = z.infer<typeof shipmentSchema>;
