import { sql, type RawBuilder } from "kysely";
import type { Executor } from "../../db/types.js";
import { inSavepoint, now, textArray, wasInserted } from "../../db/sql.js";

/** The fields an upsert writes; absent ones keep their stored value. */
export type CustomerFields = {
  phone: string;
  first_name?: string | null;
  last_name?: string | null;
  email?: string | null;
  locale?: string | null;
  tags?: RawBuilder<string[]>;
  lifetime_value?: number;
  orders_count?: number;
};

/** The fields contact sync carries: a change to any of them is a new profile version. */
const SYNCED = ["phone", "first_name", "last_name", "email", "locale", "tags", "lifetime_value", "orders_count"] as const;

/**
 * Inserts or merges the active customer with this key, and its phone's
 * messaging contact (created on first sight), in one statement: concurrent
 * pushes of one new customer make exactly one customer and one contact. The
 * profile version goes up only when a synced field really changes.
 */
export async function upsertCustomer(
  db: Executor,
  storeId: number,
  key: { external_id: string; keyed_by_phone: boolean },
  fields: CustomerFields,
) {
  return db
    .with("contact", (qb) =>
      qb
        .insertInto("contacts")
        .values({ store_id: storeId, phone: fields.phone })
        // A no-op update, so that an existing contact's id comes back too.
        .onConflict((oc) => oc.columns(["store_id", "phone"]).doUpdateSet({ phone: (eb) => eb.ref("excluded.phone") }))
        .returning("id"),
    )
    .insertInto("customers")
    .values((eb) => ({ store_id: storeId, ...key, ...fields, contact_id: eb.selectFrom("contact").select("id") }))
    .onConflict((oc) =>
      oc
        .columns(["store_id", "external_id"])
        .where("deleted_at", "is", null)
        .doUpdateSet((eb) => ({
          ...fields,
          contact_id: eb.ref("excluded.contact_id"),
          updated_at: now(),
          profile_version: profileVersionAfter(fields),
        })),
    )
    .returningAll()
    .returning(wasInserted.as("inserted"))
    .executeTakeFirstOrThrow();
}

function profileVersionAfter(fields: CustomerFields): RawBuilder<number> {
  const changed = SYNCED.filter((column) => fields[column] !== undefined).map(
    (column) => sql`${sql.ref(`customers.${column}`)} is distinct from ${sql.ref(`excluded.${column}`)}`,
  );
  return sql<number>`customers.profile_version + case when ${sql.join(changed, sql` or `)} then 1 else 0 end`;
}

/**
 * Erases the active customer with this key: personal fields cleared, the key
 * freed for a new customer (a phone key is personal data, so it goes too), the
 * link to its contact dropped. Returns the erased customer's id, if there was one.
 */
export async function eraseCustomer(db: Executor, storeId: number, externalId: string): Promise<number | undefined> {
  const customer = await db
    .selectFrom("customers")
    .select(["id", "contact_id"])
    .where("store_id", "=", storeId)
    .where("external_id", "=", externalId)
    .where("deleted_at", "is", null)
    .forUpdate()
    .executeTakeFirst();
  if (!customer) return undefined;

  await db
    .updateTable("customers")
    .set((eb) => ({
      deleted_at: now(),
      updated_at: now(),
      external_id: eb.case().when("keyed_by_phone", "=", true).then(null).else(eb.ref("external_id")).end(),
      phone: null,
      first_name: null,
      last_name: null,
      email: null,
      locale: null,
      tags: textArray([]),
      contact_id: null,
    }))
    .where("id", "=", customer.id)
    .execute();

  if (customer.contact_id !== null) {
    // A contact shared with another customer stays, but not with the profile this one may have synced to it.
    await db
      .updateTable("contacts")
      .set({ first_name: null, last_name: null, email: null, locale: null, tags: textArray([]), lifetime_value: 0, orders_count: 0, synced_at: null })
      .where("id", "=", customer.contact_id)
      .execute();
    await deleteContactIfUnused(db, customer.contact_id);
  }
  return customer.id;
}

/**
 * A contact no active customer uses holds nothing but a phone of someone who
 * asked to be forgotten. A customer linking to it at this very moment wins:
 * the contact then stays.
 */
async function deleteContactIfUnused(db: Executor, contactId: number): Promise<void> {
  await inSavepoint(db, "contact_cleanup", () =>
    db
      .deleteFrom("contacts")
      .where("id", "=", contactId)
      .where((eb) => eb.not(eb.exists(eb.selectFrom("customers").select("id").where("contact_id", "=", contactId))))
      .execute(),
  );
}
