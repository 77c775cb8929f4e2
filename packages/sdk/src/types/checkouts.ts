import type { Metadata, Timestamp } from "./common.js";

/** The customer embedded in a checkout: a customer without lifetime value, orders count or source time. */
export interface CheckoutCustomerInput {
  /** Your shop's id for the customer (1-255 characters). Omit it to key the customer by its E.164 phone. */
  external_id?: string | null | undefined;
  /** Required. Any common format; a number without `+` is read in the store's default country. Stored in E.164. */
  phone: string;
  /** At most 255 characters. */
  first_name?: string | null | undefined;
  /** At most 255 characters. */
  last_name?: string | null | undefined;
  /** A valid e-mail address, at most 255 characters. */
  email?: string | null | undefined;
  /** A locale such as `"en-US"`, at most 10 characters. */
  locale?: string | null | undefined;
  /** Replace the stored tags (not merged): at most 250 tags of 1-255 characters. */
  tags?: string[] | null | undefined;
}

/** A checkout's state. A push stores it `abandoned`; PATCH moves it. */
export type CheckoutStatus = "active" | "abandoned" | "recovered" | "completed" | "expired";

/** An abandoned-checkout push: stored as `abandoned`, and a recovery message is scheduled. */
export interface CheckoutInput {
  /** Your shop's id for the checkout (1-255 characters): the upsert key within the store. */
  external_id: string;
  /** When the checkout was abandoned. ISO 8601 with a zone. */
  abandoned_at: Timestamp;
  /** The checkout total in the currency's major unit as a JSON number; returned as a 2-decimal string rounded half-up. */
  total_price: number;
  /** A three-letter ISO 4217 code, e.g. `"EUR"`. */
  currency?: string | null | undefined;
  /** Where the customer resumes the checkout: an http(s) URL, at most 1,024 characters. */
  recovery_url?: string | null | undefined;
  /** Required: the customer, upserted with the checkout (its phone is required). */
  customer: CheckoutCustomerInput;
  /** Stored as sent: at most 1,000 free-form objects. */
  line_items?: Array<Record<string, unknown>> | null | undefined;
  /** Replace the stored tags (not merged). */
  tags?: string[] | null | undefined;
  /** Free-form JSON object, at most 16 KB serialised; replaces the stored metadata. */
  metadata?: Metadata | null | undefined;
  /** When your shop last changed the checkout; an older write than the stored one is not applied. */
  source_updated_at?: Timestamp | undefined;
}

/** A change to an existing checkout: only what you send changes. */
export interface CheckoutPatch {
  /** The new state, e.g. `"recovered"`: leaving `abandoned` cancels a pending recovery, entering it schedules one. */
  status?: CheckoutStatus | undefined;
  /** An http(s) URL; `null` clears it. */
  recovery_url?: string | null | undefined;
  /** Replace the stored tags; `null` clears them. */
  tags?: string[] | null | undefined;
  /** Replace the stored metadata; `null` clears it. */
  metadata?: Metadata | null | undefined;
  /** When your shop made this change; an older change than the stored one is not applied. */
  source_updated_at?: Timestamp | undefined;
}

/** A checkout, as the upsert and PATCH answer it. */
export interface Checkout {
  external_id: string;
  store_id: number;
  status: CheckoutStatus;
  /** A decimal string with exactly two decimals, e.g. `"89.90"`. */
  total_price: string;
  currency: string | null;
  recovery_url: string | null;
  tags: string[];
  /** ISO 8601 with milliseconds and a numeric offset. */
  created_at: string;
}

/** A checkout as stored, from `checkouts.retrieve`. */
export interface CheckoutRecord extends Checkout {
  abandoned_at: string;
  /** The linked customer's key; `null` once erased. */
  customer_external_id: string | null;
  line_items: Array<Record<string, unknown>> | null;
  metadata: Metadata | null;
  source_updated_at: string | null;
  updated_at: string;
}
