import { sql, type RawBuilder } from "kysely";
import { z } from "zod";
import type { OrderRow } from "../../db/types.js";
import { formatMoney } from "../../money.js";
import { formatTimestamp } from "../../time.js";
import { defineFlow, ERASED, recipientOf, skip, type TriggerOptions, type TriggerStore } from "./flow.js";
import { findOrdersForMessage } from "./flow.repository.js";

/** Thanks the customer for an order: once per order, when it is created. */
export const postPurchase = defineFlow({
  flow: "post_purchase",
  recordType: "order",
  payload: z.object({}),
  load: findOrdersForMessage,
  decideFrom: (row) => {
    if (!row) return skip("the order no longer exists");
    const to = recipientOf(row);
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
});

/** Fires when the write created the order (an update never does). */
export function postPurchaseJobs(store: TriggerStore, order: Pick<OrderRow, "id" | "external_id" | "customer_id">, created: boolean, options: TriggerOptions) {
  if (!created || options.backfill) return [];
  return [
    postPurchase.job(
      { store_id: store.id, dedupe_key: `post_purchase:${order.id}`, record_id: order.id, record_external_id: order.external_id, customer_id: order.customer_id },
      {},
    ),
  ];
}

/**
 * The same jobs as `postPurchaseJobs`, chosen in SQL for a push written in one
 * statement, from the orders it wrote (its `ord` CTE, with `inserted`).
 */
export function postPurchaseJobRows(store: Pick<TriggerStore, "id">, options: TriggerOptions): RawBuilder<unknown> {
  return sql`select ${store.id}::bigint, 'post_purchase', 'post_purchase:' || o.id, 'order', o.id, o.external_id, o.customer_id, '{}'::jsonb, now()
    from ord as o where o.inserted and not ${options.backfill}::boolean`;
}
