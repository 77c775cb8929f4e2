import { orderPageSchema, orderPatchSchema, orderRecordSchema, orderSchema } from "@commerce-ingest/shared";
import { router } from "../../trpc.js";
import { patchProcedure, readProcedures, writeProcedures } from "../procedures.js";
import * as orders from "./order.service.js";
import { orderWrite } from "./order.service.js";

export const orderRouter = router({
  ...readProcedures({ resource: "orders", summaries: { list: "List orders, in the order they changed", retrieve: "Read an order back" }, record: orderRecordSchema, page: orderPageSchema, read: orders.orderReadBack }),
  ...writeProcedures(orderWrite, {
    summary: "Create or update an order",
    description:
      "Upserts on (store_id, external_id). The embedded customer is upserted too and linked. " +
      "201 when created (post-purchase flow fires), 200 when updated.",
  }),
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
