import { shipmentInputSchema, shipmentSchema } from "@commerce-ingest/shared";
import { upsertSpec } from "../write-contract.js";
import * as shipments from "./shipment.service.js";

/** How shipments are written: a push, a batch and an import's lines alike. */
export const shipmentWrite = upsertSpec({
  resource: "shipments",
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
  touches: (shipment) => [`shipments:${shipment.external_id}`, `orders:${shipment.order_external_id}`],
  errors: ["SHIPMENT_ORDER_NOT_FOUND"],
  write: (call, bodies) => shipments.upsertShipments(call.db, call.store, bodies, call.options),
});
