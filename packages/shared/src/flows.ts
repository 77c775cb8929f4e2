import { z } from "zod";
import { customerSchema } from "./customer.js";
import { shipmentStatusSchema } from "./shipment.js";

const money = z.string().meta({ description: "The total: a decimal string with exactly two decimals in the currency's major unit.", example: "1250.50" });
const firstName = z.string().nullable().meta({ description: "The customer's first name, for a greeting; `null` when unknown.", example: "Ada" });
const currency = z.string().nullable().meta({ description: "The ISO 4217 code, upper-case; `null` when the shop sent none.", example: "USD" });
const template = <T extends string>(name: T) => z.literal(name).meta({ description: "The message template to use: the flow's name.", example: name });

/**
 * The content of each flow's message, keyed by flow. This is the list of flows:
 * the server defines one flow per key (its trigger, payload and handler), and a
 * webhook receiver can switch on `flow` and get the content's exact type.
 */
export const flowContentSchemas = {
  post_purchase: z.object({
    template: template("post_purchase"),
    first_name: firstName,
    order: z
      .object({
        external_id: z.string().meta({ description: "Your shop's id for the order.", example: "1001" }),
        total_price: money,
        currency,
        placed_at: z.string().meta({
          description: "When the order was placed: ISO 8601 with milliseconds and a numeric offset.",
          example: "2026-11-20T14:03:00.000+00:00",
        }),
      })
      .meta({ description: "The order the message thanks for." }),
  }),
  checkout_recovery: z.object({
    template: template("checkout_recovery"),
    first_name: firstName,
    checkout: z
      .object({
        external_id: z.string().meta({ description: "Your shop's id for the checkout.", example: "chk-5521" }),
        total_price: money,
        currency,
        recovery_url: z.string().nullable().meta({
          description: "Where the customer resumes the checkout; `null` when the shop sent none.",
          example: "https://shop.example/checkouts/chk-5521/recover",
        }),
      })
      .meta({ description: "The abandoned checkout to bring the customer back to." }),
  }),
  contact_sync: z.object({
    template: template("contact_sync"),
    /** The customer's synced profile: its E.164 phone and the customer response's profile fields. */
    profile: customerSchema
      .pick({ first_name: true, last_name: true, email: true, locale: true, tags: true, lifetime_value: true, orders_count: true })
      .extend({ phone: z.string().nullable().meta({ description: "The contact's E.164 phone.", example: "+14155552671" }) })
      .meta({ description: "The customer's profile as the contact should now show it." }),
  }),
  shipping_notification: z.object({
    template: template("shipping_notification"),
    first_name: firstName,
    order: z
      .object({ external_id: z.string().meta({ description: "Your shop's id for the order.", example: "1001" }) })
      .meta({ description: "The order shipped." }),
    shipment: z
      .object({
        external_id: z.string().meta({ description: "Your shop's id for the shipment.", example: "shp-1001-1" }),
        status: shipmentStatusSchema.nullable().meta({
          description: "The status this message announces: `pending`, `in_transit`, `delivered`, `failed` or `returned`.",
          example: "in_transit",
        }),
        carrier: z.string().nullable().meta({ description: "The carrier's name; `null` when the shop sent none.", example: "UPS" }),
        tracking_number: z.string().nullable().meta({
          description: "The carrier's tracking number; `null` when the shop sent none.",
          example: "1Z999AA10123456784",
        }),
        tracking_url: z.string().nullable().meta({
          description: "Where the customer tracks the parcel; `null` when the shop sent none.",
          example: "https://www.ups.com/track?tracknum=1Z999AA10123456784",
        }),
      })
      .meta({ description: "The shipment and its new status." }),
  }),
} as const;

export type Flow = keyof typeof flowContentSchemas;
export const FLOWS = Object.keys(flowContentSchemas) as [Flow, ...Flow[]];
export type FlowContent<F extends Flow = Flow> = z.infer<(typeof flowContentSchemas)[F]>;

function webhookMessageOf<F extends Flow>(flow: F) {
  return z.object({
    id: z.string().meta({
      description: "Stable across retries (also in `X-Message-Id`): drop a message whose id you have already handled.",
      example: "3f1c2a9e-6b1d-4c53-9a55-0e7a1b2c3d4e",
    }),
    store_id: z.number().int().meta({ description: "The id of the store whose automation sent the message.", example: 1 }),
    flow: z.literal(flow).meta({ description: "The automation that sent it; `content` has this flow's shape.", example: flow }),
    to: z.string().nullable().meta({ description: "The recipient: the contact's E.164 phone.", example: "+14155552671" }),
    // `.meta` returns the schema it is called on; the cast keeps the flow's own type (not the union of all flows').
    content: flowContentSchemas[flow].meta({ description: `What to send: the ${flow.replace("_", "-")} message's data.` }) as (typeof flowContentSchemas)[F],
    created_at: z.string().meta({
      description: "When the message was made: ISO 8601 with milliseconds and a numeric offset.",
      example: "2026-11-22T09:30:00.000+00:00",
    }),
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
