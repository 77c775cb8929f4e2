import { shipmentPageSchema, shipmentRecordSchema } from "@commerce-ingest/shared";
import { router } from "../../trpc.js";
import { readProcedures, writeProcedures } from "../procedures.js";
import * as shipments from "./shipment.service.js";
import { shipmentWrite } from "./shipment.service.js";

export const shipmentRouter = router({
  ...readProcedures({ resource: "shipments", summaries: { list: "List shipments, in the order they changed", retrieve: "Read a shipment back, with its order's external_id" }, record: shipmentRecordSchema, page: shipmentPageSchema, read: shipments.shipmentReadBack }),
  ...writeProcedures(shipmentWrite, {
    summary: "Create or update a shipment",
    description:
      "Upserts on (store_id, external_id) and links the shipment to the store's order named by order_external_id " +
      "(422 `Order not found` when there is none). Post again to change tracking or status, or to re-link.",
  }),
});
