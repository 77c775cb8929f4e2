import { orderInputSchema, orderPatchSchema, orderRecordSchema, orderSchema } from "@commerce-ingest/shared";
import { router } from "../../trpc.js";
import { getProcedure, patchProcedure, upsertProcedure } from "../procedures.js";
import * as orders from "./order.service.js";

export const orderRouter = router({
  retrieve: getProcedure({
    resource: "orders",
    summary: "Read an order back",
    output: orderRecordSchema,
    notFound: "ORDER_NOT_FOUND",
    get: (call, externalId) => orders.getOrder(call.db, call.store, externalId),
  }),
  upsert: upsertProcedure({
    resource: "orders",
    summary: "Create or update an order",
    description:
      "Upserts on (store_id, external_id). The embedded customer is upserted too and linked. " +
      "201 when created (post-purchase flow fires), 200 when updated.",
    body: orderInputSchema,
    phonePaths: [["customer", "phone"]],
    output: orderSchema,
    upsert: async (call, body) => {
      const { order, created, stale } = await orders.upsertOrder(call.db, call.store, body, call.options);
      return { record: order, created, stale };
    },
  }),
  update: patchProcedure({
    resource: "orders",
    summary: "Change an order's statuses, tags or metadata",
    description: "Only the fields sent change; tags replace. An empty body returns the order. 404 when the order does not exist.",
    body: orderPatchSchema,
    output: orderSchema,
    notFound: "ORDER_NOT_FOUND",
    update: async (call, externalId, patch) => {
      const { order, stale } = await orders.updateOrder(call.db, call.store, externalId, patch);
      return { record: order, stale };
    },
  }),
});
