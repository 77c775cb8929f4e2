import { shipmentInputSchema, shipmentPageSchema, shipmentRecordSchema, shipmentSchema } from "@commerce-ingest/shared";
import { router } from "../../trpc.js";
import { readProcedures, upsertSpec, writeProcedures } from "../procedures.js";
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
  write: (call, bodies) => shipments.upsertShipments(call.db, call.store, bodies, call.options),
});

export const shipmentRouter = router({
  ...readProcedures({ resource: "shipments", summaries: { list: "List shipments, in the order they changed", retrieve: "Read a shipment back, with its order's external_id" }, record: shipmentRecordSchema, page: shipmentPageSchema, read: shipments.shipmentReadBack }),
  ...writeProcedures(shipmentUpsert),
});
