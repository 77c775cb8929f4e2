import type { Metadata, Timestamp } from "./common.js";

/** A shipment's state; each new state notifies the customer once. */
export type ShipmentStatus = "pending" | "in_transit" | "delivered" | "failed" | "returned";

/** A shipment push, linked to an order of the same store. */
export interface ShipmentInput {
  /** Your shop's id for the shipment (1-255 characters): the upsert key within the store. */
  external_id: string;
  /** The `external_id` of an order of this store; a 422 says so when there is none. */
  order_external_id: string;
  /** The carrier's tracking number, at most 255 characters. */
  tracking_number?: string | null | undefined;
  /** An http(s) URL, at most 1,024 characters. */
  tracking_url?: string | null | undefined;
  /** The carrier's name, e.g. `"UPS"`. */
  carrier?: string | null | undefined;
  /** A new status notifies the customer once. */
  status?: ShipmentStatus | null | undefined;
  /** Free-form JSON object, at most 16 KB serialised; replaces the stored metadata. */
  metadata?: Metadata | null | undefined;
  /** When your shop last changed the shipment; an older write than the stored one is not applied. */
  source_updated_at?: Timestamp | undefined;
}

/** A shipment, as the upsert answers it. */
export interface Shipment {
  external_id: string;
  store_id: number;
  /** The service's internal id of the linked order (read it back to get its `order_external_id`). */
  order_id: number;
  tracking_number: string | null;
  tracking_url: string | null;
  carrier: string | null;
  status: ShipmentStatus | null;
}

/** A shipment as stored, from `shipments.retrieve`. */
export interface ShipmentRecord extends Shipment {
  /** The `external_id` of the linked order. */
  order_external_id: string;
  metadata: Metadata | null;
  source_updated_at: string | null;
  created_at: string;
  updated_at: string;
}
