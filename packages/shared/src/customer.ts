import { z } from "zod";
import { externalIdSchema, LIMITS, nonNegativeIntSchema, sourceUpdatedAtSchema, tagsSchema } from "./common.js";

const name = z.string().max(LIMITS.name);

/** Fields a customer shares wherever it is sent: alone or embedded in a checkout. */
export const customerBaseFields = {
  external_id: externalIdSchema.nullish(),
  phone: z.string().min(1).max(LIMITS.phone),
  first_name: name.nullish(),
  last_name: name.nullish(),
  email: z.email().max(LIMITS.name).nullish(),
  locale: z.string().min(1).max(LIMITS.locale).nullish(),
  tags: tagsSchema.nullish(),
};

/** The customer upsert body, and the customer embedded in an order. */
export const customerInputSchema = z.object({
  ...customerBaseFields,
  lifetime_value: nonNegativeIntSchema.nullish(),
  orders_count: nonNegativeIntSchema.nullish(),
  source_updated_at: sourceUpdatedAtSchema.optional(),
});

/** The customer embedded in a checkout: no lifetime value or orders count. */
export const checkoutCustomerInputSchema = z.object(customerBaseFields);

export const customerSchema = z
  .object({
    external_id: z.string(),
    store_id: z.number().int(),
    first_name: z.string().nullable(),
    last_name: z.string().nullable(),
    email: z.string().nullable(),
    locale: z.string().nullable(),
    tags: z.array(z.string()),
    lifetime_value: z.number().int(),
    orders_count: z.number().int(),
  })
  .meta({ id: "Customer" });

/** A customer as stored, read back: with the E.164 phone its `phone` became. */
export const customerRecordSchema = customerSchema
  .extend({
    phone: z.string().nullable().meta({ description: "E.164, as normalised from what was sent", example: "+14155552671" }),
    source_updated_at: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: "CustomerRecord" });

export type CustomerRecord = z.infer<typeof customerRecordSchema>;
export type CustomerInput = z.input<typeof customerInputSchema>;
export type CheckoutCustomerInput = z.input<typeof checkoutCustomerInputSchema>;
export type Customer = z.infer<typeof customerSchema>;
