import { z } from "zod";
import { customerSchema } from "./customer.js";
import { shipmentStatusSchema } from "./shipment.js";

const money = z.string().meta({ description: "Decimal string with exactly two decimals", example: "42.50" });
const firstName = z.string().nullable().meta({ description: "The customer's first name, for a greeting; null when unknown" });

/**
 * The content of each flow's message, keyed by flow. This is the list of flows:
 * the server defines one flow per key (its trigger, payload and handler), and a
 * webhook receiver can switch on `flow` and get the content's exact type.
 */
export const flowContentSchemas = {
  post_purchase: z.object({
    template: z.literal("post_purchase"),
    first_name: firstName,
    order: z.object({ external_id: z.string(), total_price: money, currency: z.string().nullable(), placed_at: z.string() }),
  }),
  checkout_recovery: z.object({
    template: z.literal("checkout_recovery"),
    first_name: firstName,
    checkout: z.object({ external_id: z.string(), total_price: money, currency: z.string().nullable(), recovery_url: z.string().nullable() }),
  }),
  contact_sync: z.object({
    template: z.literal("contact_sync"),
    /** The customer's synced profile: its E.164 phone and the customer response's profile fields. */
    profile: customerSchema
      .pick({ first_name: true, last_name: true, email: true, locale: true, tags: true, lifetime_value: true, orders_count: true })
      .extend({ phone: z.string().nullable() }),
  }),
  shipping_notification: z.object({
    template: z.literal("shipping_notification"),
    first_name: firstName,
    order: z.object({ external_id: z.string() }),
    shipment: z.object({
      external_id: z.string(),
      status: shipmentStatusSchema.nullable(),
      carrier: z.string().nullable(),
      tracking_number: z.string().nullable(),
      tracking_url: z.string().nullable(),
    }),
  }),
} as const;

export type Flow = keyof typeof flowContentSchemas;
export const FLOWS = Object.keys(flowContentSchemas) as [Flow, ...Flow[]];
export type FlowContent<F extends Flow = Flow> = z.infer<(typeof flowContentSchemas)[F]>;

function webhookMessageOf<F extends Flow>(flow: F) {
  return z.object({
    /** Stable across retries: a receiver drops a message whose id it has already handled. */
    id: z.string(),
    store_id: z.number().int(),
    flow: z.literal(flow),
    /** The contact's E.164 phone. */
    to: z.string().nullable(),
    content: flowContentSchemas[flow],
    created_at: z.string(),
  });
}

/** A message as the messaging webhook delivers it (the body the signature covers), told apart by `flow`. */
export const webhookMessageSchema = z.discriminatedUnion("flow", [
  webhookMessageOf("post_purchase"),
  webhookMessageOf("checkout_recovery"),
  webhookMessageOf("contact_sync"),
  webhookMessageOf("shipping_notification"),
]);

export type WebhookMessage = z.infer<typeof webhookMessageSchema>;
