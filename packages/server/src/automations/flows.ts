import type { Flow } from "@commerce-ingest/shared";
import type { Executor, JobRow } from "../db/types.js";
import { textArray } from "../db/sql.js";
import { formatMoney } from "../money.js";
import { formatTimestamp } from "../time.js";

/** The customer a message goes to, as the flow found it. */
export type Recipient = {
  id: number;
  contact_id: number;
  phone: string | null;
  first_name: string | null;
};

/** What a flow decided when it ran: a message for the customer's contact, or a reason to send nothing. */
export type FlowDecision = { send: true; recipient: Recipient; content: Record<string, unknown> } | { send: false; reason: string };

const skip = (reason: string): FlowDecision => ({ send: false, reason });
const ERASED = "the customer was erased";

/** Columns of the joined customer (`cu`) every flow needs; erased customers are recognised by `deleted_at`. */
const customerColumns = ["cu.id as customer_id", "cu.contact_id", "cu.phone", "cu.first_name", "cu.deleted_at"] as const;

type CustomerColumns = { customer_id: number; contact_id: number | null; phone: string | null; first_name: string | null; deleted_at: Date | null };

function recipient(row: CustomerColumns): Recipient | undefined {
  if (row.deleted_at !== null || row.contact_id === null) return undefined;
  return { id: row.customer_id, contact_id: row.contact_id, phone: row.phone, first_name: row.first_name };
}

/**
 * Each flow looks at the records as they are now, not as they were when the
 * job was recorded: an erased customer, a recovered checkout or a newer status
 * turns the job into "nothing to send". One query per flow reads all it needs,
 * and holds the customer's row so an erasure waits for the job's transaction to
 * end (and then redacts its message) rather than slipping in between.
 */
const FLOW_HANDLERS: Record<Flow, (trx: Executor, job: JobRow) => Promise<FlowDecision>> = {
  async post_purchase(trx, job) {
    const row = await trx
      .selectFrom("orders as o")
      .innerJoin("customers as cu", "cu.id", "o.customer_id")
      .select(["o.external_id", "o.total_price", "o.currency", "o.placed_at", ...customerColumns])
      .where("o.id", "=", job.record_id)
      .forKeyShare("cu")
      .executeTakeFirst();
    if (!row) return skip("the order no longer exists");
    const to = recipient(row);
    if (!to) return skip(ERASED);
    return {
      send: true,
      recipient: to,
      content: {
        template: "post_purchase",
        first_name: to.first_name,
        order: { external_id: row.external_id, total_price: formatMoney(row.total_price), currency: row.currency, placed_at: formatTimestamp(row.placed_at) },
      },
    };
  },

  async checkout_recovery(trx, job) {
    const row = await trx
      .selectFrom("checkouts as c")
      .innerJoin("customers as cu", "cu.id", "c.customer_id")
      .select(["c.external_id", "c.status", "c.abandonment_count", "c.total_price", "c.currency", "c.recovery_url", ...customerColumns])
      .select((eb) =>
        eb
          .exists(
            eb
              .selectFrom("orders as o")
              .innerJoin("customers as buyer", "buyer.id", "o.customer_id")
              .select("o.id")
              .whereRef("o.store_id", "=", "c.store_id")
              .whereRef("buyer.contact_id", "=", "cu.contact_id")
              .whereRef("o.placed_at", ">", "c.abandoned_at"),
          )
          .as("ordered_since"),
      )
      .where("c.id", "=", job.record_id)
      .forUpdate(["c", "cu"])
      .executeTakeFirst();
    if (!row) return skip("the checkout no longer exists");
    if (row.status !== "abandoned") return skip(`the checkout became ${row.status}`);
    if (row.abandonment_count !== job.payload.abandonment) return skip("a later abandonment superseded this one");
    const to = recipient(row);
    if (!to) return skip(ERASED);
    if (row.ordered_since) return skip("the customer placed an order after abandoning the checkout");
    return {
      send: true,
      recipient: to,
      content: {
        template: "checkout_recovery",
        first_name: to.first_name,
        checkout: { external_id: row.external_id, total_price: formatMoney(row.total_price), currency: row.currency, recovery_url: row.recovery_url },
      },
    };
  },

  async contact_sync(trx, job) {
    const customer = await trx.selectFrom("customers").selectAll().where("id", "=", job.record_id).forKeyShare().executeTakeFirst();
    if (!customer || customer.deleted_at !== null || customer.contact_id === null) return skip(ERASED);
    if (customer.profile_version !== job.payload.profile_version) return skip("a later change superseded this one");
    const profile = {
      first_name: customer.first_name,
      last_name: customer.last_name,
      email: customer.email,
      locale: customer.locale,
      tags: customer.tags,
      lifetime_value: customer.lifetime_value,
      orders_count: customer.orders_count,
    };
    // The messaging app's view of the contact, as this sync leaves it.
    await trx
      .updateTable("contacts")
      .set({ ...profile, tags: textArray(customer.tags), synced_at: new Date() })
      .where("id", "=", customer.contact_id)
      .execute();
    return {
      send: true,
      recipient: { id: customer.id, contact_id: customer.contact_id, phone: customer.phone, first_name: customer.first_name },
      content: { template: "contact_sync", profile: { phone: customer.phone, ...profile } },
    };
  },

  async shipping_notification(trx, job) {
    const row = await trx
      .selectFrom("shipments as s")
      .innerJoin("orders as o", "o.id", "s.order_id")
      .innerJoin("customers as cu", "cu.id", "o.customer_id")
      .select(["s.external_id", "s.status", "s.carrier", "s.tracking_number", "s.tracking_url", "o.external_id as order_external_id", ...customerColumns])
      .where("s.id", "=", job.record_id)
      .forKeyShare("cu")
      .executeTakeFirst();
    if (!row) return skip("the shipment no longer exists");
    if (row.status !== job.payload.status) return skip("a later status superseded this one");
    const to = recipient(row);
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
};

export function decide(trx: Executor, job: JobRow): Promise<FlowDecision> {
  const handler = FLOW_HANDLERS[job.flow as Flow];
  if (!handler) return Promise.resolve(skip(`unknown flow ${job.flow}`));
  return handler(trx, job);
}
