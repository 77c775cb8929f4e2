import { z } from "zod";
import { checkoutRecordSchema } from "./checkout.js";
import { timestampSchema } from "./common.js";
import { customerRecordSchema } from "./customer.js";
import { orderRecordSchema } from "./order.js";
import { shipmentRecordSchema } from "./shipment.js";

/** The most records one page of a list holds. */
export const LIST_LIMIT = 1000;

/**
 * A list's query: `GET /api/v1/stores/{store_id}/<resource>`. Query values
 * arrive as text: `limit` is a whole number written in digits.
 */
export const listQuerySchema = z.object({
  updated_after: timestampSchema
    .optional()
    .meta({ description: "Only records last changed after this time: ISO 8601 with `Z` or a numeric offset.", example: "2026-11-20T00:00:00Z" }),
  limit: z
    .string()
    .regex(/^\d{1,4}$/, "must be a whole number from 1 to 1000")
    .transform(Number)
    .pipe(z.number().int().min(1, "must be a whole number from 1 to 1000").max(LIST_LIMIT, "must be a whole number from 1 to 1000"))
    .optional()
    .meta({ description: "Records per page, 1 to 1,000 (default 100).", example: "100" }),
  cursor: z
    .string()
    .max(200)
    .optional()
    .meta({ description: "The `next_cursor` of the page before: the next page starts after it. Opaque: send it back as received." }),
});

export type ListQuery = z.input<typeof listQuerySchema>;

/** A page of records of one resource, in the order of their last change, then their id. */
function pageOf<T extends z.ZodType>(record: T, id: string) {
  return z
    .object({
      data: z.array(record).meta({ description: "The page's records, as read back one by one, in the order they last changed (then their id)." }),
      next_cursor: z
        .string()
        .nullable()
        .meta({ description: "Where the next page starts: send it as `cursor`. `null`: nothing more has changed, for now." }),
    })
    .meta({ id });
}

/** A customer in a list: an erased one is there too, without any personal data. */
export const customerListItemSchema = customerRecordSchema
  .extend({
    external_id: z
      .string()
      .nullable()
      .meta({ description: "Your shop's id for the customer, or its E.164 phone when pushed without one; `null` for an erased customer that was keyed by its phone.", example: "c-1001" }),
    erased_at: z
      .string()
      .nullable()
      .meta({ description: "When the customer was erased (its personal fields are then empty); `null` for an active customer.", example: null }),
  })
  .meta({ id: "CustomerListItem" });

export const orderPageSchema = pageOf(orderRecordSchema, "OrderPage");
export const customerPageSchema = pageOf(customerListItemSchema, "CustomerPage");
export const checkoutPageSchema = pageOf(checkoutRecordSchema, "CheckoutPage");
export const shipmentPageSchema = pageOf(shipmentRecordSchema, "ShipmentPage");

export type CustomerListItem = z.infer<typeof customerListItemSchema>;
export type Page<T> = { data: T[]; next_cursor: string | null };
