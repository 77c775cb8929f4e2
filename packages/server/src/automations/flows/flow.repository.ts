import { sql } from "kysely";
import { anyId } from "../../db/sql.js";
import type { Executor, RecordType, Trx } from "../../db/types.js";

/**
 * What the flows read and write when they run. Before anything else, a run
 * locks the contacts its messages would go to (`lockRecipientContacts`), the
 * first rows of the lock order every writer follows; each read then holds the
 * customer's row (at least `for key share`). So an erasure, which takes the
 * contacts first too, waits for the job's transaction to end and then redacts
 * its message, or the job finds the customer erased; nothing slips in between.
 */

/**
 * Locks the contacts of these records' customers as they are now, in phone
 * order, and returns their ids: the first step of a flow's run, as a push's
 * first step is its contacts, so that a worker never holds a customer or a
 * record while it waits for a contact. A group of jobs takes them `for key
 * share` (`strength`): an erasure (which locks contacts `for update`) waits
 * for the run, a push (which takes them `for no key update`) never does; a
 * contact sync of the group writes its contact only if it can strengthen that
 * lock at once (see `writeContactProfiles`). A contact sync run alone takes
 * its contact `for no key update` here, and waits for a push holding it in
 * the lock order. A record whose customer or phone changed between this read
 * and the flow's own has a recipient whose contact is not among these: its
 * job is not decided on that read (see `defineFlow`).
 */
export async function lockRecipientContacts(
  trx: Trx,
  jobs: ReadonlyArray<{ record_type: RecordType; record_id: number }>,
  strength: "key share" | "no key update",
): Promise<Set<number>> {
  if (jobs.length === 0) return new Set();
  const of = (type: RecordType) => jobs.filter((job) => job.record_type === type).map((job) => job.record_id);
  const { rows } = await sql<{ id: number }>`
    select ct.id from contacts as ct
    where ct.id = any(array(
      select cu.contact_id from customers as cu where cu.id = any(array(
        select o.customer_id from orders as o where o.id = ${anyId(of("order"))}
        union all select c.customer_id from checkouts as c where c.id = ${anyId(of("checkout"))}
        union all select o.customer_id from shipments as s join orders as o on o.id = s.order_id where s.id = ${anyId(of("shipment"))}
        union all select unnest(${of("customer")}::bigint[])))))
    order by ct.phone
    for ${sql.raw(strength)}`.execute(trx);
  return new Set(rows.map((row) => Number(row.id)));
}

/** Columns of the joined customer (`cu`) every flow needs; erased customers are recognised by `deleted_at`. */
const customerColumns = ["cu.id as customer_id", "cu.contact_id", "cu.phone", "cu.first_name", "cu.deleted_at"] as const;

/** Rows by id (a statement that never runs for no ids). */
async function byId<Row extends { id: number }>(ids: readonly number[], read: (ids: number[]) => Promise<Row[]>): Promise<Map<number, Row>> {
  if (ids.length === 0) return new Map();
  return new Map((await read([...ids])).map((row) => [Number(row.id), row]));
}

export function findOrdersForMessage(trx: Trx, orderIds: readonly number[]) {
  return byId(orderIds, (ids) =>
    trx
      .selectFrom("orders as o")
      .innerJoin("customers as cu", "cu.id", "o.customer_id")
      .select(["o.id", "o.external_id", "o.total_price", "o.currency", "o.placed_at", ...customerColumns])
      .where("o.id", "=", anyId(ids))
      .forKeyShare("cu")
      .execute(),
  );
}

/**
 * Checkouts with their customers, and whether anyone with the customer's
 * contact ordered after it was abandoned: found from the contact's customers
 * to their orders (by customer and time, one index), never from the store's
 * orders. The contact belongs to the checkout's store, and so do its customers
 * and their orders, so the store needs no condition of its own: with one, a
 * planner whose statistics lag behind a fast-growing table took the store's
 * orders first and read them all at every recovery.
 */
function checkoutsForRecovery(trx: Trx) {
  return trx
    .selectFrom("checkouts as c")
    .innerJoin("customers as cu", "cu.id", "c.customer_id")
    .select(["c.id", "c.external_id", "c.status", "c.abandonment_count", "c.total_price", "c.currency", "c.recovery_url", ...customerColumns])
    .select((eb) =>
      eb
        .exists(
          eb
            .selectFrom("orders as o")
            .innerJoin("customers as buyer", "buyer.id", "o.customer_id")
            .select("o.id")
            .whereRef("buyer.contact_id", "=", "cu.contact_id")
            .whereRef("o.placed_at", ">", "c.abandoned_at"),
        )
        .as("ordered_since"),
    );
}

/** A checkout for its recovery (see `checkoutsForRecovery`), locked for update with its customer: a push under way on either is waited for. */
export function findCheckoutForRecovery(trx: Trx, checkoutId: number) {
  return checkoutsForRecovery(trx).where("c.id", "=", checkoutId).forUpdate(["c", "cu"]).executeTakeFirst();
}

/**
 * Checkouts for their recoveries, in one statement, each locked for update
 * with its customer; a checkout whose row or customer's a push holds is left
 * out, never waited for (its job then runs alone: see `findCheckoutForRecovery`).
 */
export function findCheckoutsForRecovery(trx: Trx, checkoutIds: readonly number[]) {
  return byId(checkoutIds, (ids) => checkoutsForRecovery(trx).where("c.id", "=", anyId(ids)).orderBy("c.id").forUpdate(["c", "cu"]).skipLocked().execute());
}

export function findCustomersForSync(trx: Trx, customerIds: readonly number[]) {
  return byId(customerIds, (ids) => trx.selectFrom("customers").selectAll().where("id", "=", anyId(ids)).forKeyShare().execute());
}

export type ContactProfile = {
  first_name: string | null;
  last_name: string | null;
  email: string | null;
  locale: string | null;
  tags: string[];
  lifetime_value: number;
  orders_count: number;
};

/**
 * The messaging app's view of each contact, as a sync by its customer leaves
 * it; a contact synced twice ends with the later profile. Answers the
 * contacts it did not write. The run holds these contacts already, in phone
 * order (see `lockRecipientContacts`): a job run alone `for no key update`, a
 * group `for key share`, which this write must strengthen. Strengthening a
 * lock after others is out of the lock order, so it never waits: a contact a
 * push or an erasure holds is skipped (`skip locked`), and its sync runs
 * alone. (Waiting there deadlocked: the run holding B for key share waits to
 * write A; a push holding A waits for B behind an erasure, which waits for
 * the run.)
 */
export async function writeContactProfiles(trx: Trx, syncs: ReadonlyArray<{ contactId: number; customerId: number; profile: ContactProfile }>): Promise<ReadonlySet<number>> {
  const last = new Map(syncs.map((sync) => [sync.contactId, sync]));
  if (last.size === 0) return new Set();
  const held = await trx.selectFrom("contacts").select("id").where("id", "=", anyId([...last.keys()])).orderBy("phone").forNoKeyUpdate().skipLocked().execute();
  const writable = new Set(held.map((row) => Number(row.id)));
  const profiles = [...last.values()].filter((sync) => writable.has(sync.contactId));
  const unwritten = new Set([...last.keys()].filter((id) => !writable.has(id)));
  if (profiles.length === 0) return unwritten;
  const column = <T>(pick: (sync: (typeof profiles)[number]) => T) => profiles.map(pick);
  // One statement of constant text for any number of contacts (each column an array; tags as JSON).
  await sql`
    update contacts set first_name = sync.first_name, last_name = sync.last_name, email = sync.email, locale = sync.locale,
      tags = array(select jsonb_array_elements_text(sync.tags)), lifetime_value = sync.lifetime_value, orders_count = sync.orders_count,
      synced_at = now(), synced_customer_id = sync.customer_id
    from unnest(
      ${column((s) => s.contactId)}::bigint[], ${column((s) => s.customerId)}::bigint[], ${column((s) => s.profile.first_name)}::text[],
      ${column((s) => s.profile.last_name)}::text[], ${column((s) => s.profile.email)}::text[], ${column((s) => s.profile.locale)}::text[],
      ${column((s) => JSON.stringify(s.profile.tags))}::jsonb[], ${column((s) => s.profile.lifetime_value)}::bigint[], ${column((s) => s.profile.orders_count)}::bigint[]
    ) as sync(contact_id, customer_id, first_name, last_name, email, locale, tags, lifetime_value, orders_count)
    where contacts.id = sync.contact_id`.execute(trx);
  return unwritten;
}

export function findShipmentsForMessage(trx: Trx, shipmentIds: readonly number[]) {
  return byId(shipmentIds, (ids) =>
    trx
      .selectFrom("shipments as s")
      .innerJoin("orders as o", "o.id", "s.order_id")
      .innerJoin("customers as cu", "cu.id", "o.customer_id")
      .select(["s.id", "s.external_id", "s.status", "s.carrier", "s.tracking_number", "s.tracking_url", "o.external_id as order_external_id", ...customerColumns])
      .where("s.id", "=", anyId(ids))
      .forKeyShare("cu")
      .execute(),
  );
}

/** True when the customer is gone or erased: checked again just before a message leaves the process. */
export async function isCustomerErased(db: Executor, customerId: number | null): Promise<boolean> {
  if (customerId === null) return true;
  const customer = await db.selectFrom("customers").select("deleted_at").where("id", "=", customerId).executeTakeFirst();
  return !customer || customer.deleted_at !== null;
}
