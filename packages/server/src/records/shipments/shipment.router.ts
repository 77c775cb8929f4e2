import { shipmentInputSchema, shipmentPageSchema, shipmentRecordSchema, shipmentSchema } from "@commerce-ingest/shared";
import { AppError } from "../../errors.js";
import { router } from "../../trpc.js";
import { batchProcedure, getProcedure, listProcedure, upsertProcedure, upsertSpec } from "../procedures.js";
import * as shipments from "./shipment.service.js";

export const shipmentUpsert = upsertSpec({
  resource: "shipments",
  summary: "Create or update a shipment",
  description:
    "Upserts on (store_id, external_id) and links the shipment to the store's order named by order_external_id " +
    "(422 `Order not found` when there is none). Post again to change tracking or status, or to re-link.",
  body: shipmentInputSchema,
  phonePaths: [],
  example: {
    external_id: "shp-1001-1",
    order_external_id: "1001",
    carrier: "UPS",
    tracking_number: "1Z999AA10123456784",
    tracking_url: "https://www.ups.com/track?tracknum=1Z999AA10123456784",
    status: "in_transit",
  },
  output: shipmentSchema,
  errors: ["SHIPMENT_ORDER_NOT_FOUND"],
  upsert: async (call, body) => {
    const { shipment, created, stale } = await shipments.upsertShipment(call.db, call.store, body, call.options);
    return { record: shipment, created, stale };
  },
  upsertMany: async (call, bodies) =>
    (await shipments.upsertShipments(call.db, call.store, bodies, call.options)).map((result) =>
      result instanceof AppError ? result : { record: result.shipment, created: result.created, stale: result.stale },
    ),
});

export const shipmentRouter = router({
  list: listProcedure({ resource: "shipments", summary: "List shipments, in the order they changed", output: shipmentPageSchema, list: (call, request) => shipments.listShipments(call.db, call.store, request) }),
  retrieve: getProcedure({
    resource: "shipments",
    summary: "Read a shipment back, with its order's external_id",
    output: shipmentRecordSchema,
    notFound: "SHIPMENT_NOT_FOUND",
    get: (call, externalId) => shipments.getShipment(call.db, call.store, externalId),
  }),
  upsert: upsertProcedure(shipmentUpsert),
  batch: batchProcedure(shipmentUpsert),
});
