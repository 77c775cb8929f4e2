import type { Flow } from "@commerce-ingest/shared";
import type { CustomerRow, Executor, JobRow } from "../db/types.js";
import { formatMoney } from "../money.js";
import { formatTimestamp } from "../time.js";

/** What a flow decided when it ran: a message for the customer's contact, or a reason to send nothing. */
export type FlowDecision =
  | { send: true; customer: CustomerRow; content: Record<string, unknown>; syncContact?: boolean }
  | { send: false; reason: string };

const skip = (reason: string): FlowDecision => ({ send: false, reason });

async function activeCustomer(trx: Executor, customerId: number): Promise<CustomerRow | undefined> {
  const customer = await trx.selectFrom("customers").selectAll().where("id", "=", customerId).executeTakeFirst();
  return customer && customer.deleted_at === null && customer.contact_id !== null ? customer : undefined;
}

const firstName = (customer: CustomerRow) => customer.first_name;

/**
 * Each flow looks at the records as they are now, not as they were when the
 * job was recorded: an erased customer, a recovered checkout or a newer status
 * turns the job into "nothing to send".
 */
const FLOW_HANDLERS: Record<Flow, (trx: Executor, job: JobRow) => Promise<FlowDecision>> = {
  async post_purchase(trx, job) {
    const order = await trx.selectFrom("orders").selectAll().where("id", "=", job.record_id).executeTakeFirst();
    if (!order) return skip("the order no longer exists");
    const customer = await activeCustomer(trx, order.customer_id);
    if (!customer) return skip("the customer was erased");
    return {
      send: true,
      customer,
      content: {
        template: "post_purchase",
        first_name: firstName(customer),
        order: {
          external_id: order.external_id,
          total_price: formatMoney(order.total_price),
          currency: order.currency,
          placed_at: formatTimestamp(order.placed_at),
        },
      },
    };
  },

  async checkout_recovery(trx, job) {
    const checkout = await trx.selectFrom("checkouts").selectAll().where("id", "=", job.record_id).forUpdate().executeTakeFirst();
    if (!checkout) return skip("the checkout no longer exists");
    if (checkout.status !== "abandoned") return skip(`the checkout became ${checkout.status}`);
    if (checkout.abandonment_count !== job.payload.abandonment) return skip("a later abandonment superseded this one");
    const customer = await activeCustomer(trx, checkout.customer_id);
    if (!customer) return skip("the customer was erased");
    const laterOrder = await trx
      .selectFrom("orders as o")
      .innerJoin("customers as cu", "cu.id", "o.customer_id")
      .select("o.id")
      .where("o.store_id", "=", checkout.store_id)
      .where("cu.contact_id", "=", customer.contact_id)
      .where("o.placed_at", ">", checkout.abandoned_at)
      .limit(1)
      .executeTakeFirst();
    if (laterOrder) return skip("the customer placed an order after abandoning the checkout");
    return {
      send: true,
      customer,
      content: {
        template: "checkout_recovery",
        first_name: firstName(customer),
        checkout: {
          external_id: checkout.external_id,
          total_price: formatMoney(checkout.total_price),
          currency: checkout.currency,
          recovery_url: checkout.recovery_url,
        },
      },
    };
  },

  async contact_sync(trx, job) {
    const customer = await activeCustomer(trx, job.record_id);
    if (!customer) return skip("the customer was erased");
    if (customer.profile_version !== job.payload.profile_version) return skip("a later change superseded this one");
    return {
      send: true,
      customer,
      syncContact: true,
      content: {
        template: "contact_sync",
        profile: {
          phone: customer.phone,
          first_name: customer.first_name,
          last_name: customer.last_name,
          email: customer.email,
          locale: customer.locale,
          tags: customer.tags,
          lifetime_value: customer.lifetime_value,
          orders_count: customer.orders_count,
        },
      },
    };
  },

  async shipping_notification(trx, job) {
    const shipment = await trx.selectFrom("shipments").selectAll().where("id", "=", job.record_id).executeTakeFirst();
    if (!shipment) return skip("the shipment no longer exists");
    if (shipment.status !== job.payload.status) return skip("a later status superseded this one");
    const order = await trx.selectFrom("orders").select(["external_id", "customer_id"]).where("id", "=", shipment.order_id).executeTakeFirstOrThrow();
    const customer = await activeCustomer(trx, order.customer_id);
    if (!customer) return skip("the customer was erased");
    return {
      send: true,
      customer,
      content: {
        template: "shipping_notification",
        first_name: firstName(customer),
        order: { external_id: order.external_id },
        shipment: {
          external_id: shipment.external_id,
          status: shipment.status,
          carrier: shipment.carrier,
          tracking_number: shipment.tracking_number,
          tracking_url: shipment.tracking_url,
        },
      },
    };
  },
};

export function decide(trx: Executor, job: JobRow): Promise<FlowDecision> {
  const handler = FLOW_HANDLERS[job.flow as Flow];
  if (!handler) return Promise.resolve(skip(`unknown flow ${job.flow}`));
  return handler(trx, job);
}
