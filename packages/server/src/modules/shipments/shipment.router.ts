import { shipmentInputSchema, shipmentSchema } from "@commerce-ingest/shared";
import { storeBodyProcedure } from "../../auth/auth.middleware.js";
import { router } from "../../trpc.js";
import { storeIdParam } from "../params.js";
import * as shipments from "./shipment.service.js";

export const shipmentRouter = router({
  upsert: storeBodyProcedure
    .meta({
      openapi: {
        method: "POST",
        path: "/api/v1/stores/{store_id}/shipments",
        tags: ["shipments"],
        summary: "Create or update a shipment",
        description:
          "Upserts on (store_id, external_id) and links the shipment to the store's order named by order_external_id " +
          "(422 `Order not found` when there is none). Post again to change tracking or status, or to re-link.",
        protect: true,
      },
    })
    .input(shipmentInputSchema.extend({ store_id: storeIdParam }))
    .output(shipmentSchema)
    .mutation(async ({ ctx, input: { store_id: _storeId, ...body } }) => {
      const { shipment, created } = await shipments.upsertShipment(ctx.db, ctx.store, body, { backfill: ctx.backfill });
      ctx.response.status = created ? 201 : 200;
      return shipment;
    }),
});
