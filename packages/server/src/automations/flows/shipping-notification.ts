import { shipmentStatusSchema } from "@commerce-ingest/shared";
import { sql } from "kysely";
import { z } from "zod";
import { defineFlow, messageTo, skip, WRITTEN } from "./flow.js";
import { findShipmentsForMessage } from "./flow.repository.js";

/** Tells the customer where their parcel is: once per (shipment, status). */
export const shippingNotification = defineFlow({
  flow: "shipping_notification",
  recordType: "shipment",
  /** The status this job announces: a newer status supersedes it. */
  payload: z.object({ status: shipmentStatusSchema.nullable() }),
  // When the write created the shipment or changed its status: going back to a status already announced finds
  // its key taken, so once per (shipment, status). The message goes to the customer of the shipment's order.
  trigger: {
    on: WRITTEN.shipments,
    when: sql<boolean>`w.status_changed`,
    oncePer: sql`coalesce(w.status, 'none')`,
    customerId: sql<number>`(select o.customer_id from orders as o where o.id = w.order_id)`,
    payload: sql`jsonb_build_object('status', w.status)`,
  },
  load: findShipmentsForMessage,
  decideFrom: (row, payload) => {
    if (!row) return skip("the shipment no longer exists");
    if (row.status !== payload.status) return skip("a later status superseded this one");
    return messageTo(row, (to) => ({
      template: "shipping_notification",
      first_name: to.first_name,
      order: { external_id: row.order_external_id },
      shipment: { external_id: row.external_id, status: row.status, carrier: row.carrier, tracking_number: row.tracking_number, tracking_url: row.tracking_url },
    }));
  },
});
