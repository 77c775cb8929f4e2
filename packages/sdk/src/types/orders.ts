import type { Metadata, Timestamp } from "./common.js";
import type { CustomerInput } from "./customers.js";

/** An order push. */
export interface OrderInput {
  /** Your shop's id for the order (1-255 characters): the upsert key within the store. */
  external_id: string;
  /** When the order was placed. ISO 8601 with a zone, e.g. `"2026-11-20T14:03:00Z"`. */
  placed_at: Timestamp;
  /**
   * The order total in the currency's **major unit** as a JSON number (`1250.5`), at most 999,999,999,999.99.
   * Stored and returned as a 2-decimal string rounded half-up (`"1250.50"`): a 3-decimal currency loses its third decimal.
   */
  total_price: number;
  /** A three-letter ISO 4217 code, e.g. `"EUR"`. */
  currency?: string | null | undefined;
  /** Your payment status, e.g. `"paid"` (at most 64 characters). */
  financial_status?: string | null | undefined;
  /** Your fulfilment status, e.g. `"fulfilled"` (at most 64 characters). */
  fulfillment_status?: string | null | undefined;
  /** Required: the customer who placed the order, upserted with it (its phone is required). */
  customer: CustomerInput;
  /** Stored as sent: at most 1,000 free-form objects. */
  line_items?: Array<Record<string, unknown>> | null | undefined;
  /** Replace the stored tags (not merged): at most 250 tags of 1-255 characters. */
  tags?: string[] | null | undefined;
  /** Free-form JSON object, at most 16 KB serialised; replaces the stored metadata. */
  metadata?: Metadata | null | undefined;
  /** When your shop last changed the order. A write older than the stored one is not applied (`X-Stale-Write: ignored`). */
  source_updated_at?: Timestamp | undefined;
}

/** A change to an existing order: only what you send changes. */
export interface OrderPatch {
  /** Your payment status, e.g. `"refunded"`; `null` clears it. */
  financial_status?: string | null | undefined;
  /** Your fulfilment status; `null` clears it. */
  fulfillment_status?: string | null | undefined;
  /** Replace the stored tags; `null` or `[]` clears them. */
  tags?: string[] | null | undefined;
  /** Replace the stored metadata; `null` clears it. */
  metadata?: Metadata | null | undefined;
  /** When your shop made this change; an older change than the stored one is not applied. */
  source_updated_at?: Timestamp | undefined;
}

/** An order, as the upsert and PATCH answer it. */
export interface Order {
  /** Your id for the order. */
  external_id: string;
  /** The store the order belongs to. */
  store_id: number;
  /** The total as a decimal string with exactly two decimals, e.g. `"1250.50"`. */
  total_price: string;
  currency: string | null;
  /** `null` when never set. */
  financial_status: string | null;
  /** `null` when never set. */
  fulfillment_status: string | null;
  /** Empty when none. */
  tags: string[];
  /** When the service first stored the order: ISO 8601 with milliseconds and a numeric offset. */
  created_at: string;
}

/** An order as stored, from `orders.retrieve`. */
export interface OrderRecord extends Order {
  /** When the order was placed, as ISO 8601 with milliseconds and a numeric offset. */
  placed_at: string;
  /** The linked customer's key (its E.164 phone when it has no external_id); `null` once erased. */
  customer_external_id: string | null;
  line_items: Array<Record<string, unknown>> | null;
  metadata: Metadata | null;
  /** The last `source_updated_at` applied, if any. */
  source_updated_at: string | null;
  updated_at: string;
}
