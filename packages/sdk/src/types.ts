/**
 * The API's data, as plain interfaces: what you send and what you get back.
 * They are written out by hand so that an editor's hover reads like the API
 * reference; a compile-time test keeps each one equal to the service's own
 * schema, field for field.
 *
 * Merge rules for every upsert and PATCH: a field you send replaces the stored
 * value, a field you leave out keeps it, and `null` clears it.
 */

/** An ISO 8601 date-time with `Z` or a numeric offset, e.g. `"2026-11-20T14:03:00+01:00"`. A time without a zone is refused. */
export type Timestamp = string;

/** A free-form JSON object, at most 16 KB serialised. Replaces the stored metadata when sent. */
export type Metadata = Record<string, unknown>;

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

/** A code the API answers with, exactly as its error bodies carry it (made from the service's error table at each build). */
export type { ErrorCode } from "./codes.js";

/** What one item of a batch came to. */
export interface BatchItemResult<T> {
  /** What a push of this item alone would have answered: 201 created, 200 updated, 422 refused; 500 or 503: not stored, send it again. */
  status: number;
  /** The item's external_id, as sent (`null` when it had none). */
  external_id: string | null;
  /** On 201 and 200: the record, as the single upsert answers it. */
  record?: T | undefined;
  /** Present when the item was older than the stored record (`source_updated_at`) and not applied. */
  stale?: true | undefined;
  /** Fields of the item the API ignored (only when not strict). */
  ignored_fields?: string[] | undefined;
  /** On 422, 500 and 503: the error's message. */
  error?: string | undefined;
  /** On 422, 500 and 503: the error's stable code, as an error body's (`"validation_failed"`). */
  code?: string | undefined;
  /** On 422: one entry per failing field of the item. */
  details?: ErrorDetail[] | undefined;
}

/** A batch's answer, or all the batches of an `upsertMany`. */
export interface BatchResult<T> {
  /** One result per item, in the order sent. */
  results: Array<BatchItemResult<T>>;
  counts: { created: number; updated: number; failed: number };
}

/** One failing field of a 422. */
export interface ErrorDetail {
  /** The field's dotted path, e.g. `"customer.phone"` or `"line_items.3"`. */
  path: string;
  /** What is wrong with it, e.g. `"is not a valid phone number"` or `"unknown field"`. */
  message: string;
}

/** Every error body the API answers with. */
export interface ErrorBody {
  /** The contract's message, e.g. `"Invalid request body"`: for people, it may be reworded. */
  error: string;
  /**
   * The stable code the service sends, e.g. `"validation_failed"` (absent from
   * servers older than codes). `APIError.code` is the same.
   */
  code?: string | undefined;
  /** On a 422: one entry per failing field. */
  details?: ErrorDetail[] | undefined;
}

/** The greeting name a message uses: the customer's first name, `null` when unknown. */
type FirstName = string | null;

/** A post-purchase message: sent once per new order. */
export interface PostPurchaseContent {
  template: "post_purchase";
  first_name: FirstName;
  order: { external_id: string; total_price: string; currency: string | null; placed_at: string };
}

/** A checkout-recovery message: sent after the store's delay, unless the checkout is recovered first. */
export interface CheckoutRecoveryContent {
  template: "checkout_recovery";
  first_name: FirstName;
  checkout: { external_id: string; total_price: string; currency: string | null; recovery_url: string | null };
}

/** A contact sync: the customer's profile, sent when it is created or changes. */
export interface ContactSyncContent {
  template: "contact_sync";
  profile: {
    first_name: string | null;
    last_name: string | null;
    email: string | null;
    locale: string | null;
    tags: string[];
    /** In the minor unit (cents) of the shop's currency. */
    lifetime_value: number;
    orders_count: number;
    /** E.164. */
    phone: string | null;
  };
}

/** A shipping notification: sent once per shipment and status. */
export interface ShippingNotificationContent {
  template: "shipping_notification";
  first_name: FirstName;
  order: { external_id: string };
  shipment: {
    external_id: string;
    status: ShipmentStatus | null;
    carrier: string | null;
    tracking_number: string | null;
    tracking_url: string | null;
  };
}

/** The content of each flow's message, by flow. */
export interface FlowContents {
  post_purchase: PostPurchaseContent;
  checkout_recovery: CheckoutRecoveryContent;
  contact_sync: ContactSyncContent;
  shipping_notification: ShippingNotificationContent;
}

/** The automations that send messages. */
export type Flow = keyof FlowContents;

/** A message of one flow, as the messaging webhook delivers it. */
export interface WebhookMessageOf<F extends Flow> {
  /** Stable across retries: drop a message whose id you have already handled. */
  id: string;
  /** The store whose automation sent it. */
  store_id: number;
  /** Which automation sent it: switch on it to get `content`'s exact type. */
  flow: F;
  /** The contact's E.164 phone. */
  to: string | null;
  content: FlowContents[F];
  /** ISO 8601 with milliseconds and a numeric offset. */
  created_at: string;
}

/** A messaging-webhook delivery (the body `X-Signature` covers), told apart by `flow`. */
export type WebhookMessage = { [F in Flow]: WebhookMessageOf<F> }[Flow];

/** A customer in a list: an erased one too, without any personal data. */
export interface CustomerListItem extends Omit<CustomerRecord, "external_id"> {
  /** Your shop's id, or the E.164 phone it was keyed by; `null` for an erased customer that was keyed by its phone. */
  external_id: string | null;
  /** When the customer was erased (its personal fields are then empty); `null` for an active one. */
  erased_at: string | null;
}

/** A page of a list: its records in the order they last changed, and where the next page starts. */
export interface Page<T> {
  data: T[];
  /** Send it as `cursor` for the next page; `null`: nothing more has changed, for now. */
  next_cursor: string | null;
}

/** What an import's lines hold: one kind of record per file. */
export type ImportKind = "orders" | "customers" | "checkouts" | "shipments";

/** An import's state: `queued` and `running` until it ends `succeeded`, `failed` or `cancelled`. */
export type ImportStatus = "queued" | "running" | "succeeded" | "failed" | "cancelled";

/** An import, as `GET /imports/{import_id}` answers it. */
export interface Import {
  id: number;
  store_id: number;
  kind: ImportKind;
  status: ImportStatus;
  /** Records in the file (its lines that are not blank). */
  lines: number;
  /** Lines merged or refused so far. */
  processed: number;
  created: number;
  /** Lines that updated a record (or were older than it and changed nothing). */
  updated: number;
  /** Lines refused: see `errors()`. */
  failed: number;
  /** Bytes received, as sent. */
  bytes: number;
  records_per_second: number | null;
  /** Why a `failed` import stopped, in words. */
  error: string | null;
  /**
   * Why a `failed` import stopped, as a stable code: `upload_interrupted`, `request_timeout`,
   * `import_too_large`, `import_file_invalid` (its upload ended without its 202; nothing merged) or
   * `merge_failed` (what was merged stays). More may be added.
   */
  error_code: string | null;
  created_at: string;
  received_at: string | null;
  started_at: string | null;
  finished_at: string | null;
}

/** One refused line of an import. */
export interface ImportError {
  /** The line's number in the file, from 1 (blank lines count). */
  line: number;
  external_id: string | null;
  /** What a push of this line alone would have answered. */
  status: number;
  code: string;
  error: string;
  details?: Array<{ path: string; message: string }> | undefined;
}
