import { orderInputSchema, orderPageSchema, orderPatchSchema, orderRecordSchema, orderSchema } from "@commerce-ingest/shared";
import { router } from "../../trpc.js";
import { patchProcedure, readProcedures, upsertSpec, writeProcedures } from "../procedures.js";
import * as orders from "./order.service.js";

export const orderUpsert = upsertSpec({
  resource: "orders",
  summary: "Create or update an order",
  description:
    "Upserts on (store_id, external_id). The embedded customer is upserted too and linked. " +
    "201 when created (post-purchase flow fires), 200 when updated.",
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
  write: (call, bodies) => orders.upsertOrders(call.db, call.store, bodies, call.options),
});

export const orderRouter = router({
  ...readProcedures({ resource: "orders", summaries: { list: "List orders, in the order they changed", retrieve: "Read an order back" }, record: orderRecordSchema, page: orderPageSchema, read: orders.orderReadBack }),
  ...writeProcedures(orderUpsert),
  update: patchProcedure({
    resource: "orders",
    summary: "Change an order's statuses, tags or metadata",
    description: "Only the fields sent change; tags replace. An empty body returns the order. 404 when the order does not exist.",
    body: orderPatchSchema,
    example: { financial_status: "refunded", tags: ["web", "refunded"] },
    output: orderSchema,
    notFound: "ORDER_NOT_FOUND",
    update: async (call, externalId, patch) => {
      const { order, stale } = await orders.updateOrder(call.db, call.store, externalId, patch);
      return { record: order, stale };
    },
  }),
});
