import { customerInputSchema, customerSchema, type CustomerInput } from "@commerce-ingest/shared";
import { upsertSpec } from "../write-contract.js";
import * as customers from "./customer.service.js";

/** The rows a customer's write may touch (see `UpsertSpec.touches`): the customer, and the contact of its phone. */
export function customerTouches(customer: CustomerInput): string[] {
  return [`customers:${customers.customerKey(customer)}`, `phones:${customer.phone}`];
}

/** How customers are written: a push, a batch and an import's lines alike. */
export const customerWrite = upsertSpec({
  resource: "customers",
  body: customerInputSchema,
  phonePaths: [["phone"]],
  // The phone in national form: read in the store's country (a store in the US here).
  example: {
    external_id: "c-1001",
    phone: "(415) 555-2671",
    first_name: "Ada",
    last_name: "Lovelace",
    email: "ada@example.com",
    locale: "en-US",
    tags: ["vip", "newsletter"],
    lifetime_value: 125050,
    orders_count: 3,
  },
  output: customerSchema,
  keyOf: customers.customerKey,
  touches: customerTouches,
  write: (call, bodies) => customers.upsertCustomers(call.db, call.store, bodies, call.options),
});
