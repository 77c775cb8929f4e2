import { shipmentStatusSchema } from "@commerce-ingest/shared";
import { sql, type RawBuilder } from "kysely";
import { z } from "zod";
import type { ShipmentRow } from "../../db/types.js";
import { defineFlow, ERASED, recipientOf, skip, type TriggerOptions, type TriggerStore } from "./flow.js";
import { findShipmentsForMessage } from "./flow.repository.js";

/** Tells the customer where their parcel is: once per (shipment, status). */
export const shippingNotification = defineFlow({
  flow: "shipping_notification",
  recordType: "shipment",
  /** The status this job announces: a newer status supersedes it. */
  payload: z.object({ status: shipmentStatusSchema.nullable() }),
  load: findShipmentsForMessage,
  decideFrom: (row, payload) => {
    if (!row) return skip("the shipment no longer exists");
    if (row.status !== payload.status) return skip("a later status superseded this one");
    const to = recipientOf(row);
    if (!to) return skip(ERASED);
    return {
      send: true,
      recipient: to,
      content: {
        template: "shipping_notification",
        first_name: to.first_name,
        order: { external_id: row.order_external_id },
        shipment: { external_id: row.external_id, status: row.status, carrier: row.carrier, tracking_number: row.tracking_number, tracking_url: row.tracking_url },
      },
    };
  },
});

/**
 * Fires when this write created the shipment or changed its status. Going back
 * to a status already announced finds its key taken: once per (shipment, status).
 */
export function shippingNotificationJobs(store: TriggerStore, shipment: ShipmentRow, customerId: number, options: TriggerOptions) {
  if (options.backfill || !shipment.status_changed) return [];
  return [
    shippingNotification.job(
      {
        store_id: store.id,
        dedupe_key: `shipping_notification:${shipment.id}:${shipment.status ?? "none"}`,
        record_id: shipment.id,
        record_external_id: shipment.external_id,
        customer_id: customerId,
      },
      { status: shipment.status },
    ),
  ];
}

/**
 * The same jobs as `shippingNotificationJobs`, chosen in SQL for a statement
 * that writes shipments, from the shipments it wrote (its `ship` CTE) and their
 * orders (`ord`).
 */
export function shippingNotificationJobRows(store: Pick<TriggerStore, "id">, options: TriggerOptions): RawBuilder<unknown> {
  return sql`select ${store.id}::bigint, 'shipping_notification', 'shipping_notification:' || s.id || ':' || coalesce(s.status, 'none'), 'shipment', s.id, s.external_id, o.customer_id, jsonb_build_object('status', s.status), now()
    from ship as s join ord as o on o.id = s.order_id where s.status_changed and not ${options.backfill}::boolean`;
}
