import { sql } from "kysely";
import { z } from "zod";
import { formatMoney, formatTimestamp } from "../../db/sql.js";
import { defineFlow, messageTo, skip, WRITTEN } from "./flow.js";
import { findOrdersForMessage } from "./flow.repository.js";

/** Thanks the customer for an order: once per order, when it is created. */
export const postPurchase = defineFlow({
  flow: "post_purchase",
  recordType: "order",
  payload: z.object({}),
  // When the write created the order (an update never does): once per order.
  trigger: { on: WRITTEN.orders, when: sql<boolean>`w.inserted`, oncePer: null, customerId: sql<number>`w.customer_id`, payload: sql`'{}'::jsonb` },
  load: findOrdersForMessage,
  decideFrom: (row) => {
    if (!row) return skip("the order no longer exists");
    return messageTo(row, (to) => ({
      template: "post_purchase",
      first_name: to.first_name,
      order: { external_id: row.external_id, total_price: formatMoney(row.total_price), currency: row.currency, placed_at: formatTimestamp(row.placed_at) },
    }));
  },
});
