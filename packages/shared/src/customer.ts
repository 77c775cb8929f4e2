import { z } from "zod";
import { externalIdSchema, KEEP_OR_CLEAR, LIMITS, nonNegativeIntSchema, sourceUpdatedAtOutputSchema, sourceUpdatedAtSchema, storedTime, tagsInputSchema } from "./common.js";

const name = z.string().max(LIMITS.name);
const LIFETIME_VALUE = "What the customer has spent, as an integer >= 0 in the minor unit (cents) of the shop's currency: `125050` is 1,250.50.";
/** An integer cleared with `null` goes back to 0. */
const KEEP_OR_RESET = "Leave it out to keep the stored value; `null` resets it to 0.";

/** Fields a customer shares wherever it is sent: alone or embedded in a checkout. */
export const customerBaseFields = {
  external_id: externalIdSchema.nullish().meta({
    description:
      "Your shop's id for the customer, 1-255 characters: the upsert key within the store. " +
      "Leave it out (or send `null`) and the customer is keyed by its E.164 phone instead.",
    example: "c-1001",
  }),
  phone: z
    .string()
    .min(1)
    .max(LIMITS.phone)
    .meta({
      description:
        "Required. Any common format; a number without `+` is read in the store's default country (`(415) 555-2671` in a US store). " +
        "Normalised to E.164 (`+14155552671`); an invalid number is a 422 naming this field. " +
        "It matches the customer to its messaging contact, and is the customer's key when `external_id` is absent.",
      example: "+14155552671",
    }),
  first_name: name.nullish().meta({ description: `The customer's first name, at most 255 characters. ${KEEP_OR_CLEAR}`, example: "Ada" }),
  last_name: name.nullish().meta({ description: `The customer's last name, at most 255 characters. ${KEEP_OR_CLEAR}`, example: "Lovelace" }),
  email: z
    .email()
    .max(LIMITS.name)
    .nullish()
    .meta({ description: `The customer's e-mail address, at most 255 characters. ${KEEP_OR_CLEAR}`, example: "ada@example.com" }),
  locale: z
    .string()
    .min(1)
    .max(LIMITS.locale)
    .nullish()
    .meta({ description: `The customer's language, as a locale code of at most 10 characters. ${KEEP_OR_CLEAR}`, example: "en-US" }),
  tags: tagsInputSchema,
};

/** The customer upsert body, and the customer embedded in an order. */
export const customerInputSchema = z.object({
  ...customerBaseFields,
  lifetime_value: nonNegativeIntSchema.nullish().meta({ description: `${LIFETIME_VALUE} ${KEEP_OR_RESET}`, example: 125050 }),
  orders_count: nonNegativeIntSchema.nullish().meta({ description: `How many orders the customer has placed: an integer >= 0. ${KEEP_OR_RESET}`, example: 3 }),
  source_updated_at: sourceUpdatedAtSchema.optional().meta({
    description:
      "On the customer upsert: when your shop last changed the customer, ISO 8601 with `Z` or a numeric offset (a time without a zone is refused). " +
      "A write older than the stored one is not applied (200, `X-Stale-Write: ignored`). Ignored on a customer embedded in an order.",
    example: "2026-11-20T14:05:00Z",
  }),
});

/** The customer embedded in a checkout: no lifetime value or orders count. */
export const checkoutCustomerInputSchema = z.object(customerBaseFields);

export const customerSchema = z
  .object({
    external_id: z.string().meta({ description: "Your shop's id for the customer, or its E.164 phone when it was pushed without one.", example: "c-1001" }),
    store_id: z.number().int().meta({ description: "The id of the store the customer belongs to.", example: 1 }),
    first_name: z.string().nullable().meta({ description: "The customer's first name; `null` when never sent or cleared.", example: "Ada" }),
    last_name: z.string().nullable().meta({ description: "The customer's last name; `null` when never sent or cleared.", example: "Lovelace" }),
    email: z.string().nullable().meta({ description: "The customer's e-mail address; `null` when never sent or cleared.", example: "ada@example.com" }),
    locale: z.string().nullable().meta({ description: "The customer's locale code; `null` when never sent or cleared.", example: "en-US" }),
    tags: z.array(z.string()).meta({ description: "The customer's tags, in the order sent; empty when none.", example: ["vip", "newsletter"] }),
    lifetime_value: z.number().int().meta({
      description: "What the customer has spent, as an integer in the minor unit (cents) of the shop's currency; 0 when never sent.",
      example: 125050,
    }),
    orders_count: z.number().int().meta({ description: "How many orders the customer has placed; 0 when never sent.", example: 3 }),
  })
  .meta({ id: "Customer" });

/** A customer as stored, read back: with the E.164 phone its `phone` became. */
export const customerRecordSchema = customerSchema
  .extend({
    phone: z.string().nullable().meta({ description: "The customer's phone as stored: E.164, normalised from what was sent.", example: "+14155552671" }),
    source_updated_at: sourceUpdatedAtOutputSchema,
    created_at: storedTime("When the service first stored the customer"),
    updated_at: storedTime("When the service last changed the customer"),
  })
  .meta({ id: "CustomerRecord" });

export type CustomerRecord = z.infer<typeof customerRecordSchema>;
export type CustomerInput = z.input<typeof customerInputSchema>;
export type CheckoutCustomerInput = z.input<typeof checkoutCustomerInputSchema>;
export type Customer = z.infer<typeof customerSchema>;
