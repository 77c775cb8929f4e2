import type { CheckoutRow, CustomerRow, Executor, OrderRow, ShipmentRow } from "../db/types.js";
import { cancelPendingJobs, enqueueJob, redactCustomerMessages } from "./jobs.repository.js";

/**
 * What a push means for the automations, recorded in the push's own
 * transaction: an acknowledged push never loses its flow, a rolled-back one
 * never fires it. Each job's key names the one occasion it stands for, so a
 * repeated or concurrent push finds the key taken and adds nothing.
 *
 * `backfill` pushes (historical data) are stored without triggering anything.
 */
export type TriggerOptions = { backfill: boolean };

type Store = { id: number; recoveryDelaySeconds: number };

/** Contact sync, once per version of the customer's synced profile. */
export async function customerWritten(trx: Executor, store: Store, customer: CustomerRow, options: TriggerOptions): Promise<void> {
  if (options.backfill || customer.external_id === null) return;
  await enqueueJob(trx, {
    store_id: store.id,
    flow: "contact_sync",
    dedupe_key: `contact_sync:${customer.id}:${customer.profile_version}`,
    record_type: "customer",
    record_id: customer.id,
    record_external_id: customer.external_id,
    customer_id: customer.id,
    payload: { profile_version: customer.profile_version },
  });
}

/** Post-purchase on creation only; and any order cancels the customer's older pending recoveries. */
export async function orderWritten(
  trx: Executor,
  store: Store,
  order: OrderRow,
  customer: CustomerRow,
  created: boolean,
  options: TriggerOptions,
): Promise<void> {
  if (created && !options.backfill) {
    await enqueueJob(trx, {
      store_id: store.id,
      flow: "post_purchase",
      dedupe_key: `post_purchase:${order.id}`,
      record_type: "order",
      record_id: order.id,
      record_external_id: order.external_id,
      customer_id: customer.id,
    });
  }
  if (customer.contact_id === null) return;
  // The same person may check out as a guest and order with an account: match by their contact (phone).
  const recovered = await trx
    .selectFrom("checkouts as c")
    .innerJoin("customers as cu", "cu.id", "c.customer_id")
    .select("c.id")
    .where("c.store_id", "=", store.id)
    .where("cu.contact_id", "=", customer.contact_id)
    .where("c.abandoned_at", "<", order.placed_at)
    .execute();
  await cancelPendingJobs(
    trx,
    { flow: "checkout_recovery", record_type: "checkout", record_ids: recovered.map((row) => row.id) },
    "the customer placed an order after abandoning the checkout",
  );
}

/** Recovery once per entry into `abandoned`, after the store's delay; leaving `abandoned` cancels it. */
export async function checkoutWritten(trx: Executor, store: Store, checkout: CheckoutRow, options: TriggerOptions): Promise<void> {
  if (checkout.status !== "abandoned") {
    await cancelPendingJobs(
      trx,
      { flow: "checkout_recovery", record_type: "checkout", record_ids: [checkout.id] },
      `the checkout became ${checkout.status}`,
    );
    return;
  }
  if (options.backfill) return;
  await enqueueJob(trx, {
    store_id: store.id,
    flow: "checkout_recovery",
    dedupe_key: `checkout_recovery:${checkout.id}:${checkout.abandonment_count}`,
    record_type: "checkout",
    record_id: checkout.id,
    record_external_id: checkout.external_id,
    customer_id: checkout.customer_id,
    payload: { abandonment: checkout.abandonment_count },
    delaySeconds: store.recoveryDelaySeconds,
  });
}

/** Shipping notification once per (shipment, status): a repeated status finds its key taken. */
export async function shipmentWritten(trx: Executor, store: Store, shipment: ShipmentRow, options: TriggerOptions): Promise<void> {
  if (options.backfill) return;
  const order = await trx.selectFrom("orders").select("customer_id").where("id", "=", shipment.order_id).executeTakeFirstOrThrow();
  await enqueueJob(trx, {
    store_id: store.id,
    flow: "shipping_notification",
    dedupe_key: `shipping_notification:${shipment.id}:${shipment.status ?? "none"}`,
    record_type: "shipment",
    record_id: shipment.id,
    record_external_id: shipment.external_id,
    customer_id: order.customer_id,
    payload: { status: shipment.status },
  });
}

/** Nothing more reaches an erased customer, including a recovery already scheduled. */
export async function customerErased(trx: Executor, customerId: number): Promise<void> {
  await cancelPendingJobs(trx, { customer_id: customerId }, "the customer was erased");
  await redactCustomerMessages(trx, customerId);
}
