import { shipmentInputSchema, shipmentRecordSchema, shipmentSchema } from "@commerce-ingest/shared";
import { router } from "../../trpc.js";
import { getProcedure, upsertProcedure } from "../procedures.js";
import * as shipments from "./shipment.service.js";

export const shipmentRouter = router({
  retrieve: getProcedure({
    resource: "shipments",
    summary: "Read a shipment back, with its order's external_id",
    output: shipmentRecordSchema,
    notFound: "SHIPMENT_NOT_FOUND",
    get: (call, externalId) => shipments.getShipment(call.db, call.store, externalId),
  }),
  upsert: upsertProcedure({
    resource: "shipments",
    summary: "Create or update a shipment",
    description:
      "Upserts on (store_id, external_id) and links the shipment to the store's order named by order_external_id " +
      "(422 `Order not found` when there is none). Post again to change tracking or status, or to re-link.",
    body: shipmentInputSchema,
    phonePaths: [],
    output: shipmentSchema,
    errors: ["SHIPMENT_ORDER_NOT_FOUND"],
    upsert: async (call, body) => {
      const { shipment, created, stale } = await shipments.upsertShipment(call.db, call.store, body, call.options);
      return { record: shipment, created, stale };
    },
  }),
});
