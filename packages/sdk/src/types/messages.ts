import type { ShipmentStatus } from "./shipments.js";

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
