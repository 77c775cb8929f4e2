import type { Timestamp } from "./common.js";

/** A customer as sent with a customer upsert, or embedded in an order. */
export interface CustomerInput {
  /** Your shop's id for the customer (1-255 characters): the upsert key. Omit it to key the customer by its E.164 phone. */
  external_id?: string | null | undefined;
  /**
   * Required. Any common format: `"+14155552671"`, `"(415) 555-2671"`. A number without `+` is read in
   * the store's default country. Stored in E.164; a 422 names it when it is not a valid number.
   */
  phone: string;
  /** At most 255 characters. */
  first_name?: string | null | undefined;
  /** At most 255 characters. */
  last_name?: string | null | undefined;
  /** A valid e-mail address, at most 255 characters. */
  email?: string | null | undefined;
  /** A locale such as `"en-US"` or `"fr"`, at most 10 characters. */
  locale?: string | null | undefined;
  /** Replace the stored tags (not merged): at most 250 tags of 1-255 characters. */
  tags?: string[] | null | undefined;
  /** An integer in the **minor unit** of the shop's currency (cents): `125050` is 1,250.50. `null` resets it to 0. */
  lifetime_value?: number | null | undefined;
  /** How many orders the customer has placed, an integer >= 0. `null` resets it to 0. */
  orders_count?: number | null | undefined;
  /**
   * When your shop last changed the customer. A write older than the stored one is not applied (`X-Stale-Write: ignored`).
   * Ignored on a customer embedded in an order (the order's own `source_updated_at` decides).
   */
  source_updated_at?: Timestamp | undefined;
}

/** A customer, as the customer upsert answers it. */
export interface Customer {
  /** Your id for the customer, or its E.164 phone when it was sent without one. */
  external_id: string;
  /** The store the customer belongs to. */
  store_id: number;
  first_name: string | null;
  last_name: string | null;
  email: string | null;
  locale: string | null;
  /** Empty when none. */
  tags: string[];
  /** In the minor unit (cents) of the shop's currency; 0 when never sent. */
  lifetime_value: number;
  /** 0 when never sent. */
  orders_count: number;
}

/** A customer as stored, from `customers.retrieve`. */
export interface CustomerRecord extends Customer {
  /** The E.164 phone the sent `phone` became, e.g. `"+14155552671"`. */
  phone: string | null;
  /** The last `source_updated_at` applied, if any. */
  source_updated_at: string | null;
  /** ISO 8601 with milliseconds and a numeric offset, e.g. `"2026-11-22T09:30:00.000+00:00"`. */
  created_at: string;
  /** ISO 8601 with milliseconds and a numeric offset. */
  updated_at: string;
}

/** A customer in a list: an erased one too, without any personal data. */
export interface CustomerListItem extends Omit<CustomerRecord, "external_id"> {
  /** Your shop's id, or the E.164 phone it was keyed by; `null` for an erased customer that was keyed by its phone. */
  external_id: string | null;
  /** When the customer was erased (its personal fields are then empty); `null` for an active one. */
  erased_at: string | null;
}
