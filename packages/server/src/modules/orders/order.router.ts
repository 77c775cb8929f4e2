import { orderInputSchema, orderPatchSchema, orderSchema } from "@commerce-ingest/shared";
import { z } from "zod";
import { storeBodyProcedure } from "../../auth/auth.middleware.js";
import { router } from "../../trpc.js";
import { storeIdParam } from "../params.js";
import { validateBody } from "../validate.js";
import * as orders from "./order.service.js";

const tags = ["orders"];

export const orderRouter = router({
  upsert: storeBodyProcedure
    .meta({
      openapi: {
        method: "POST",
        path: "/api/v1/stores/{store_id}/orders",
        tags,
        summary: "Create or update an order",
        description:
          "Upserts on (store_id, external_id). The embedded customer is upserted too and linked. " +
          "201 when created (post-purchase flow fires), 200 when updated.",
        protect: true,
      },
    })
    .use(validateBody(orderInputSchema, [["customer", "phone"]]))
    .input(orderInputSchema.extend({ store_id: storeIdParam }))
    .output(orderSchema)
    .mutation(async ({ ctx, input: { store_id: _storeId, ...body } }) => {
      const { order, created } = await orders.upsertOrder(ctx.db, ctx.store, body, { backfill: ctx.backfill });
      ctx.response.status = created ? 201 : 200;
      return order;
    }),
  update: storeBodyProcedure
    .meta({
      openapi: {
        method: "PATCH",
        path: "/api/v1/stores/{store_id}/orders/{external_id}",
        tags,
        summary: "Change an order's statuses, tags or metadata",
        description: "Only the fields sent change; tags replace. An empty body returns the order. 404 when the order does not exist.",
        protect: true,
      },
    })
    .input(orderPatchSchema.extend({ store_id: storeIdParam, external_id: z.string() }))
    .output(orderSchema)
    .mutation(({ ctx, input: { store_id: _storeId, external_id, ...patch } }) => orders.updateOrder(ctx.db, ctx.store, external_id, patch)),
});
