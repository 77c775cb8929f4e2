import { checkoutInputSchema, checkoutSchema } from "@commerce-ingest/shared";
import { customerTouches } from "../customers/customer.write.js";
import { upsertSpec } from "../write-contract.js";
import * as checkouts from "./checkout.service.js";

/** How checkouts are written: a push, a batch and an import's lines alike. */
export const checkoutWrite = upsertSpec({
  resource: "checkouts",
  body: checkoutInputSchema,
  phonePaths: [["customer", "phone"]],
  example: {
    external_id: "chk-5521",
    abandoned_at: "2026-11-20T13:40:00Z",
    total_price: 89.9,
    currency: "USD",
    recovery_url: "https://shop.example/checkouts/chk-5521/recover",
    customer: { external_id: "c-1001", phone: "+14155552671", first_name: "Ada" },
    line_items: [{ sku: "MUG-1", title: "Mug", quantity: 1, price: 89.9 }],
  },
  output: checkoutSchema,
  touches: (checkout) => [`checkouts:${checkout.external_id}`, ...customerTouches(checkout.customer)],
  write: (call, bodies) => checkouts.upsertCheckouts(call.db, call.store, bodies, call.options),
});
