import { sql, type RawBuilder } from "kysely";
import { z } from "zod";
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

/**
 * Fires when the write created the order (an update never does): the jobs,
 * chosen in SQL for a statement that writes orders, from the orders it wrote
 * (its `ord` CTE, with `inserted`).
 */
export function postPurchaseJobRows(store: Pick<TriggerStore, "id">, options: TriggerOptions): RawBuilder<unknown> {
  return sql`select ${store.id}::bigint, 'post_purchase', 'post_purchase:' || o.id, 'order', o.id, o.external_id, o.customer_id, '{}'::jsonb, now()
    from ord as o where o.inserted and not ${options.backfill}::boolean`;
}
