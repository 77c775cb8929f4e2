import type { CheckoutRow, CustomerRow, Executor, OrderRow, ShipmentRow } from "../db/types.js";
import { cancelPendingJobs, cancelRecoveriesOfContactBefore, enqueueJobs, redactCustomerMessages, type NewJob } from "./jobs.repository.js";

/**
 * What a push means for the automations, recorded in the push's own
 * transaction: an acknowledged push never loses its flow, a rolled-back one
 * never fires it. Each job's key names the one occasion it stands for, so a
 * repeated or concurrent push finds the key taken and adds nothing.
 *
 * A flow fires for what the write itself changed (the row says so: it was
 * created, its profile or status changed, it entered `abandoned`), never for
 * the state it found: a record stored by a backfill and touched again later
 * fires nothing until a later write changes what the flow is about.
 *
 * The `...Jobs` functions return the jobs a write calls for, and the service
 * records them all with `record`, in one statement. `checkoutJobs` also cancels
 * the pending recovery of a checkout that left `abandoned`, right away.
 *
 * `backfill` pushes (historical data) never start a flow; they may still end one
 * (a backfilled checkout marked recovered cancels its pending recovery).
 */
export type TriggerOptions = { backfill: boolean };

type Store = { id: number; recoveryDelaySeconds: number };

export const record = (trx: Executor, jobs: NewJob[]) => enqueueJobs(trx, jobs);

/** Contact sync, once per version of the customer's synced profile, when this write made that version. */
export function customerJobs(store: Store, customer: CustomerRow, options: TriggerOptions): NewJob[] {
  if (options.backfill || !customer.profile_changed || customer.external_id === null) return [];
  return [
    {
      store_id: store.id,
      flow: "contact_sync",
      dedupe_key: `contact_sync:${customer.id}:${customer.profile_version}`,
      record_type: "customer",
      record_id: customer.id,
      record_external_id: customer.external_id,
      customer_id: customer.id,
      payload: { profile_version: customer.profile_version },
    },
  ];
}

/** Post-purchase, on creation only. */
export function orderJobs(store: Store, order: OrderRow, created: boolean, options: TriggerOptions): NewJob[] {
  if (!created || options.backfill) return [];
  return [
    {
      store_id: store.id,
      flow: "post_purchase",
      dedupe_key: `post_purchase:${order.id}`,
      record_type: "order",
      record_id: order.id,
      record_external_id: order.external_id,
      customer_id: order.customer_id,
    },
  ];
}

/**
 * Any order cancels the pending recoveries of checkouts its customer abandoned
 * before placing it. The same person may check out as a guest and order with
 * an account, so they are matched by their contact (phone).
 */
export async function orderPlaced(trx: Executor, store: Store, order: OrderRow, customer: CustomerRow): Promise<void> {
  if (customer.contact_id === null) return;
  await cancelRecoveriesOfContactBefore(trx, store.id, customer.contact_id, order.placed_at, "the customer placed an order after abandoning the checkout");
}

/** Recovery once per entry into `abandoned` made by this write, after the store's delay; leaving `abandoned` cancels it. */
export async function checkoutJobs(trx: Executor, store: Store, checkout: CheckoutRow, options: TriggerOptions): Promise<NewJob[]> {
  if (checkout.status !== "abandoned") {
    await cancelPendingJobs(
      trx,
      { flow: "checkout_recovery", record_type: "checkout", record_ids: [checkout.id] },
      `the checkout became ${checkout.status}`,
    );
    return [];
  }
  if (options.backfill || !checkout.entered_abandoned) return [];
  return [
    {
      store_id: store.id,
      flow: "checkout_recovery",
      dedupe_key: `checkout_recovery:${checkout.id}:${checkout.abandonment_count}`,
      record_type: "checkout",
      record_id: checkout.id,
      record_external_id: checkout.external_id,
      customer_id: checkout.customer_id,
      payload: { abandonment: checkout.abandonment_count },
      delaySeconds: store.recoveryDelaySeconds,
    },
  ];
}

/**
 * Shipping notification when this write created the shipment or changed its
 * status; once per (shipment, status), so going back to an earlier status finds its key taken.
 */
export function shipmentJobs(store: Store, shipment: ShipmentRow, customerId: number, options: TriggerOptions): NewJob[] {
  if (options.backfill || !shipment.status_changed) return [];
  return [
    {
      store_id: store.id,
      flow: "shipping_notification",
      dedupe_key: `shipping_notification:${shipment.id}:${shipment.status ?? "none"}`,
      record_type: "shipment",
      record_id: shipment.id,
      record_external_id: shipment.external_id,
      customer_id: customerId,
      payload: { status: shipment.status },
    },
  ];
}

/** Nothing more reaches an erased customer, including a recovery already scheduled. */
export async function customerErased(trx: Executor, customerId: number): Promise<void> {
  await cancelPendingJobs(trx, { customer_id: customerId }, "the customer was erased");
  await redactCustomerMessages(trx, customerId);
}
