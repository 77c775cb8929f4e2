import { sql, type QueryCreator, type RawBuilder } from "kysely";
import { z } from "zod";
import { SOME_ROWS, formatMoney } from "../../db/sql.js";
import type { Database } from "../../db/types.js";
import { cancelPendingRecoveries } from "../jobs.repository.js";
import { defineFlow, ERASED, recipientOf, skip, WRITTEN, type WriteShape } from "./flow.js";
import { findCheckoutForRecovery, findCheckoutsForRecovery } from "./flow.repository.js";

const ORDERED = "the customer placed an order after abandoning the checkout";

/**
 * Brings the customer back to an abandoned checkout, after the store's delay:
 * once per abandonment. Cancelled when the checkout leaves `abandoned`, the
 * customer orders, or the customer is erased.
 */
export const checkoutRecovery = defineFlow({
  flow: "checkout_recovery",
  recordType: "checkout",
  /** Which abandonment of the checkout this job is for: a later one supersedes it. */
  payload: z.object({ abandonment: z.number().int().positive() }),
  // When a write moved the checkout into `abandoned` (or created it so), never for an abandoned checkout it merely
  // touched: once per abandonment, after the store's delay.
  trigger: {
    on: WRITTEN.checkouts,
    when: sql<boolean>`w.status = 'abandoned' and w.entered_abandoned`,
    oncePer: sql`w.abandonment_count`,
    customerId: sql<number>`w.customer_id`,
    payload: sql`jsonb_build_object('abandonment', w.abandonment_count)`,
    afterRecoveryDelay: true,
  },
  // Cancelled when the checkout leaves `abandoned`, and when its customer (by contact) places an order after it.
  cancels: { [WRITTEN.checkouts]: cancelRecoveriesOfLeftCheckouts, [WRITTEN.orders]: cancelRecoveriesForOrders },
  // Locked for update, as a push writing the checkout or its customer locks them: a recovery never decides on
  // what a push under way is changing. Run together, the checkouts pushes hold are left to their jobs run alone.
  load: findCheckoutsForRecovery,
  loadWaiting: findCheckoutForRecovery,
  decideFrom: (row, payload) => {
    if (!row) return skip("the checkout no longer exists");
    if (row.status !== "abandoned") return skip(`the checkout became ${row.status}`);
    if (row.abandonment_count !== payload.abandonment) return skip("a later abandonment superseded this one");
    const to = recipientOf(row);
    if (!to) return skip(ERASED);
    if (row.ordered_since) return skip(ORDERED);
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
});

/**
 * Any order cancels the pending recoveries of checkouts its customer abandoned
 * before placing it. The same person may check out as a guest and order with
 * an account, so they are matched by their contact (phone). This is the
 * cancellation of an order written in one statement, as a CTE from its `ord`
 * and `customer` CTEs. The statement's own customer is matched
 * by id as well as by contact: the statement does not see its own write of
 * the customer, whose contact it may have just changed.
 */
export function cancelRecoveriesForOrderRows<DB extends Database>(qc: QueryCreator<DB>) {
  return cancelPendingRecoveries(
    qc,
    // Through the customers of the contact, then their checkouts: index lookups, never a scan of the store's
    // checkouts. The customers' ids are gathered into an array first, and the store has no condition of its own
    // (the contact is the store's, and so are its customers and their checkouts): the statement is prepared, and
    // a generic plan that took the store's checkouts first read them all, with the store's customers, at every
    // order (hundreds of milliseconds a push in a store with a few thousand customers).
    sql<number>`(select c.id from checkouts as c, ord
      where c.customer_id = any(array(
          select cu.id from customers as cu where cu.contact_id = any(array(select contact_id from customer))
          union all select id from customer))
        and c.abandoned_at < ord.placed_at)`,
    // A constant: written into the statement, which is built once (see `writeOrders`).
    sql.lit(ORDERED),
  );
}

/**
 * The most orders a statement writes for which their recovery cancellation
 * goes from each order to its contact's checkouts (index lookups): pushes,
 * alone or written together. Past it (batches), the orders are grouped by
 * contact first (`checkoutsOfBatch`). The shapes a statement is compiled for
 * tell some records from many at the same count (`SOME_ROWS`).
 */
export const MOST_ORDERS_BY_ID = SOME_ROWS;

/**
 * The same cancellation for `orders` orders written by a statement (its `ord` CTE)
 * after their customers were, by an earlier one: each order's customer
 * as now stored, then the customers of its contact, then their checkouts
 * (index lookups, as `cancelRecoveriesForOrderRows`), for up to
 * `MOST_ORDERS_BY_ID` orders; a batch of more, `checkoutsOfBatch`.
 */
export function cancelRecoveriesForWrittenOrders<DB extends Database>(qc: QueryCreator<DB>, orders: number) {
  const byOrder = sql<number>`(select c.id from ord
    join customers as buyer on buyer.id = ord.customer_id
    join customers as cu on cu.contact_id = buyer.contact_id
    join checkouts as c on c.customer_id = cu.id
    where c.abandoned_at < ord.placed_at)`;
  // The reason, a constant: written into the statement, which is built once.
  return cancelPendingRecoveries(qc, orders <= MOST_ORDERS_BY_ID ? byOrder : checkoutsOfBatch(false), sql.lit(ORDERED));
}

/**
 * The checkouts a batch's orders cancel the recoveries of: a checkout is its
 * customer's, and so its contact's, and is cancelled when an order of that
 * contact was placed after it was abandoned. The orders are grouped by
 * contact first (the latest of each), and the checkouts found once for the
 * batch: order by order, the checkouts every order's contact reaches cost a
 * batch of 1,000 orders 0.24 ms of the database's CPU a record in the
 * benchmark, and joined to the recoveries instead, a plan that started from
 * 2,000 pending recoveries read 875,000 customers a batch. When the statement
 * writes the customers (`withCustomers`: its `customer` CTE), a checkout's
 * customer that it writes has the contact it writes.
 */
function checkoutsOfBatch(withCustomers: boolean): RawBuilder<number> {
  const buyers = withCustomers ? sql`customer` : sql`customers`;
  const written = withCustomers ? sql`left join customer as written on written.id = cc.id` : sql``;
  const contact = withCustomers ? sql`coalesce(written.contact_id, cc.contact_id)` : sql`cc.contact_id`;
  return sql<number>`(select c.id from checkouts as c
    join customers as cc on cc.id = c.customer_id
    ${written}
    join (select buyer.contact_id, max(ord.placed_at) as placed_at from ord join ${buyers} as buyer on buyer.id = ord.customer_id group by buyer.contact_id) as oc
      on oc.contact_id = ${contact}
    where c.abandoned_at < oc.placed_at)`;
}

/**
 * The same cancellation for orders written by the statement that writes their
 * customers (its `ord` and `customer` CTEs): the statement reads the stored
 * customers as they were before it, so the customers of an order's contact are
 * those stored with it that the statement did not write, and those it wrote
 * with it (as the same orders written after their customers find them). A
 * batch of more than `MOST_ORDERS_BY_ID` orders: `checkoutsOfBatch`.
 */
export function cancelRecoveriesForOrdersWithCustomers<DB extends Database>(qc: QueryCreator<DB>, orders: number) {
  const byOrder = sql<number>`(select c.id from ord
    join customer as buyer on buyer.id = ord.customer_id
    join lateral (
      select cu.id from customers as cu where cu.contact_id = buyer.contact_id and cu.id <> all(array(select id from customer))
      union all
      select written.id from customer as written where written.contact_id = buyer.contact_id
    ) as cu on true
    -- Each customer's checkouts by its index (the subquery kept whole by \`offset 0\`): a generic plan that hashed
    -- the customers instead read every checkout of the table once per order.
    join lateral (select c.id, c.abandoned_at from checkouts as c where c.customer_id = cu.id offset 0) as c on true
    where c.abandoned_at < ord.placed_at)`;
  return cancelPendingRecoveries(qc, orders <= MOST_ORDERS_BY_ID ? byOrder : checkoutsOfBatch(true), sql.lit(ORDERED));
}

/**
 * A checkout that left `abandoned` has its pending recovery cancelled at
 * once, backfill or not: from the checkouts a statement wrote (its `chk` CTE),
 * each job with its own checkout's state (a statement may write many).
 */
export function cancelRecoveriesOfLeftCheckouts<DB extends Database>(qc: QueryCreator<DB>) {
  return cancelPendingRecoveries(
    qc,
    sql<number>`(select id from chk where status <> 'abandoned')`,
    sql<string>`'the checkout became ' || (select k.status from chk as k where k.id = automation_jobs.record_id)`,
  );
}

/** The cancellation an order's write makes, for how the statement wrote it (see the three above). */
function cancelRecoveriesForOrders(qc: QueryCreator<Database>, write: WriteShape) {
  const orders = write.orders ?? 1;
  if (write.alone) return cancelRecoveriesForOrderRows(qc);
  return write.tables.includes(WRITTEN.customers) ? cancelRecoveriesForOrdersWithCustomers(qc, orders) : cancelRecoveriesForWrittenOrders(qc, orders);
}
