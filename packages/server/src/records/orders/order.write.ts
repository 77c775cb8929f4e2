import { orderInputSchema, orderSchema } from "@commerce-ingest/shared";
import { customerTouches } from "../customers/customer.write.js";
import { upsertSpec } from "../write-contract.js";
import * as orders from "./order.service.js";

/** How orders are written: a push, a batch and an import's lines alike. */
export const orderWrite = upsertSpec({
  resource: "orders",
  body: orderInputSchema,
  phonePaths: [["customer", "phone"]],
  example: {
    external_id: "1001",
    placed_at: "2026-11-20T14:03:00Z",
    total_price: 129.9,
    currency: "USD",
    financial_status: "paid",
    fulfillment_status: null,
    customer: { external_id: "c-1001", phone: "+14155552671", first_name: "Ada", last_name: "Lovelace", email: "ada@example.com" },
    line_items: [{ sku: "TEE-BLK-M", title: "T-shirt", quantity: 2, price: 64.95 }],
    tags: ["web"],
    metadata: { channel: "online_store" },
  },
  output: orderSchema,
  touches: (order) => [`orders:${order.external_id}`, ...customerTouches(order.customer)],
  write: (call, bodies) => orders.upsertOrders(call.db, call.store, bodies, call.options),
});
