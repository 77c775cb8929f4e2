import { sql, type QueryCreator, type RawBuilder } from "kysely";
import { answerColumns, statement, type ValueOf, writtenRows, arrayParameter, type ArrayColumn, linkedByKey, written, inSavepoint, isForeignKeyViolation, mergedColumns, notStale, now, textArray, unnestRows, wasInserted, LockOrderConflict } from "../../db/sql.js";
import type { CustomerRow, Database, Executor, Trx } from "../../db/types.js";
import { withTriggers, WRITTEN } from "../../automations/triggers.js";
import { inWindow, type PageWindow } from "../../db/pages.js";
import type { SharedOptionalColumns } from "../write-path.js";

/** The fields an upsert writes; absent ones keep their stored value. */
export type CustomerFields = {
  phone: string;
  first_name?: string | null;
  last_name?: string | null;
  email?: string | null;
  locale?: string | null;
  tags?: readonly string[];
  lifetime_value?: number;
  orders_count?: number;
  source_updated_at?: string;
};

/** The SQL type of each column a customer's write can carry. */
const customerTypes: Record<keyof CustomerFields | keyof CustomerWrite["key"], string> = {
  external_id: "text",
  keyed_by_phone: "boolean",
  phone: "text",
  first_name: "text",
  last_name: "text",
  email: "text",
  locale: "text",
  tags: "text[]",
  lifetime_value: "bigint",
  orders_count: "bigint",
  source_updated_at: "timestamptz",
};

/** The fields contact sync carries: a change to any of them is a new profile version. */
const SYNCED = ["phone", "first_name", "last_name", "email", "locale", "tags", "lifetime_value", "orders_count"] as const;

/** One customer of an upsert: its key, and the fields it writes. */
export type CustomerWrite = { key: { external_id: string; keyed_by_phone: boolean }; fields: CustomerFields };

/**
 * The columns a customer's write answers with: the response's, and the id an
 * order or a checkout links to. Not the phone, contact, profile version and
 * times, which the statement's own triggers read and nothing after it does.
 */
export const WRITTEN_CUSTOMER = ["id", "store_id", "external_id", "first_name", "last_name", "email", "locale", "tags", "lifetime_value", "orders_count"] as const;
export type WrittenCustomer = Pick<CustomerRow, (typeof WRITTEN_CUSTOMER)[number]>;
/** What a statement wrote of a customer, and whether it created it. */
export type WrittenCustomerRow = WrittenCustomer & { inserted: boolean };

/**
 * Inserts or merges the active customers with these keys, and their phones'
 * messaging contacts (created on first sight), in one statement: concurrent
 * pushes of one new customer make exactly one customer and one contact. The
 * profile version goes up only when a synced field really changes, and
 * `profile_changed` says whether this write changed it. The contact is also
 * remembered among the customer's contacts, so an erasure finds every phone the
 * customer ever had.
 *
 * A write that would change nothing of its stored customer (every field it
 * carries, its source time included, already stored, and its contact set)
 * is not written: neither it nor its contact gets a new row version or a
 * lock, and it comes back as stored, not created and its profile unchanged.
 * An import names each customer in every chunk that holds one of its orders;
 * only those that change are written.
 *
 * The contact sync each write calls for is recorded by the same statement,
 * chosen in SQL (as a customer's push alone chooses it).
 *
 * Every write carries the same fields (absent ones keep their stored value)
 * and its own key: a key twice in one statement is refused by PostgreSQL. A
 * push is a set of one.
 */
export async function writeCustomers(db: Executor, push: CustomersToWrite & { backfill: boolean; strict: boolean; statusesOnly?: true | undefined }): Promise<WrittenCustomerRow[]> {
  if (push.writes.length === 0) return [];
  return written(await writeCustomersStatement(db, push));
}

/**
 * `writeCustomers`' statement, with the contact syncs the writes call for (see
 * `withCustomerSyncs`). `strict`: a write older than its stored customer
 * fails the whole statement (a stale write), and nothing of it stays;
 * otherwise nothing comes back for it. Built once per set of fields (see `statement`).
 */
const writeCustomersStatement = statement(
  (db, value: ValueOf<CustomersToWrite & { backfill: boolean; strict: boolean; statusesOnly?: true | undefined }>, { writes, statusesOnly }) =>
    withCustomerSyncs(db, value, fieldsOf(writes), writes.length === 1)
      .selectFrom(writtenRows<WrittenCustomerRow, CustomersToWrite & { strict: boolean }>(value, WRITTEN.customers, (args) => args.writes.length))
      .select(answerColumns(WRITTEN_CUSTOMER, statusesOnly)),
);

/** `withCustomers` with what the customers written trigger (see `withTriggers`). */
function withCustomerSyncs<A extends CustomersToWrite & { backfill: boolean }>(db: Executor, value: ValueOf<A>, columns: readonly (keyof CustomerFields)[], one: boolean) {
  return withTriggers(withCustomers(db, value, columns, one), { tables: [WRITTEN.customers] }, { id: value((args) => args.storeId) }, { backfill: value((args) => args.backfill) });
}

/**
 * Creates the contacts of these phones that do not exist, and locks them all
 * against writers until the transaction ends, in phone order: the order every
 * statement that writes customers takes them in.
 */
export async function takeContacts(db: Executor, storeId: number, phones: readonly string[]): Promise<void> {
  const sorted = [...new Set(phones)].sort();
  if (sorted.length === 0) return;
  await sql`
    insert into contacts (store_id, phone) select ${storeId}::bigint, phone from unnest(${sorted}::text[]) as p(phone) order by phone
    on conflict (store_id, phone) do update set synced_at = contacts.synced_at`.execute(db);
}

/**
 * Every column of a customer, as the statement's CTEs hold the customers it
 * wrote or left as stored (its triggers and links read them; what it answers
 * is `WRITTEN_CUSTOMER`): each of the table's, so that a column added to it
 * and not here fails to compile.
 */
const CUSTOMER_COLUMN_SET: Record<keyof CustomerRow, true> = {
  id: true,
  store_id: true,
  external_id: true,
  keyed_by_phone: true,
  phone: true,
  first_name: true,
  last_name: true,
  email: true,
  locale: true,
  tags: true,
  lifetime_value: true,
  orders_count: true,
  contact_id: true,
  profile_version: true,
  profile_changed: true,
  source_updated_at: true,
  created_at: true,
  updated_at: true,
  deleted_at: true,
};
const CUSTOMER_COLUMNS = Object.keys(CUSTOMER_COLUMN_SET) as ReadonlyArray<keyof CustomerRow>;

/** The customers one statement writes, and their store. */
export type CustomersToWrite = { storeId: number; writes: readonly CustomerWrite[] };

/** The fields the writes carry (they all carry the same). */
export const fieldsOf = (writes: readonly CustomerWrite[]): (keyof CustomerFields)[] => Object.keys(writes[0]?.fields ?? {}) as (keyof CustomerFields)[];

/**
 * The statement's customers (see `upsertCustomers`) as CTEs a statement goes
 * on from: `incoming` (each write, with the active customer stored under its
 * key as the statement found it, each of its columns as `stored_<column>`,
 * and `held` when the write would change none of it), `contact` (the phones
 * of the writes not held), `customer_written`, `customer` (the written rows
 * and the held ones as stored, with `inserted`) and `link`.
 * Its text depends on `columns`, the fields the writes carry, alone; its values
 * come through `value` (see `statement`).
 */
export function withCustomers<A extends CustomersToWrite>(db: Executor, value: ValueOf<A>, columns: readonly (keyof CustomerFields)[], one: boolean) {
  if (columns.length === 0) throw new Error("no customer to write");
  const changed = profileChanged(columns);
  // Rows as one array per column (`unnest`): the same statement text for any number of customers; one customer, its own values.
  const rows = (names: ReadonlyArray<keyof typeof customerTypes>, pick: (name: keyof typeof customerTypes, write: CustomerWrite) => unknown): ArrayColumn[] =>
    names.map((name) => ({
      name,
      type: customerTypes[name],
      parameter: one ? value((args) => (args.writes[0] ? pick(name, args.writes[0]) : null)) : value((args) => arrayParameter(customerTypes[name], args.writes.map((write) => pick(name, write)))),
      one,
    }));
  const keyColumns = ["external_id", "keyed_by_phone"] as const;
  const storeId = sql`${value((args) => args.storeId)}::bigint`;
  const incoming = unnestRows([], [
    ...rows(keyColumns, (name, write) => write.key[name as keyof CustomerWrite["key"]]),
    ...rows(columns, (name, write) => write.fields[name as keyof CustomerFields]),
  ]);
  // A customer stored with every field the write carries, and its contact: the write would change nothing.
  const unchanged = sql.join(
    columns.map((column) => sql`${sql.ref(`i.${column}`)} is not distinct from ${sql.ref(`i.stored_${column}`)}`),
    sql` and `,
  );
  const picked = (names: readonly string[]) => sql.join(names.map((name) => sql.ref(`i.${name}`)));
  return db
    .with("incoming", () =>
      sql`(select i.*, (i.stored_id is not null and i.stored_contact_id is not null and ${unchanged}) as held
        from (select r.*, s.* from (${incoming}) as r
          left join lateral (select ${sql.join(CUSTOMER_COLUMNS.map((column) => sql`${sql.ref(`c.${column}`)} as ${sql.id(`stored_${column}`)}`))} from customers as c
            where c.store_id = ${storeId} and c.external_id = r.external_id and c.deleted_at is null limit 1) as s on true) as i)`,
    )
    .with("contact", (qb) =>
      qb
        .insertInto("contacts")
        .columns(["store_id", "phone"])
        .expression(sql`select ${storeId}, p.phone from (select distinct phone from incoming where not held) as p order by p.phone`)
        // A no-op update, so that an existing contact's id comes back too. It sets no key column, so it
        // locks the contact only against writers: a message or a customer referring to it never waits.
        .onConflict((oc) => oc.columns(["store_id", "phone"]).doUpdateSet({ synced_at: (eb) => eb.ref("contacts.synced_at") }))
        .returning(["id", "phone"]),
    )
    .with("customer_written", (qb) =>
      qb
        .insertInto("customers")
        .columns(["store_id", ...keyColumns, ...columns, "contact_id"])
        .expression(
          sql`select ${storeId}, ${picked([...keyColumns, ...columns])}, contact.id from incoming as i left join contact on contact.phone = i.phone
            where not i.held order by i.external_id`,
        )
        .onConflict((oc) =>
          oc
            .columns(["store_id", "external_id"])
            .where("deleted_at", "is", null)
            .doUpdateSet({
              ...mergedColumns("customers", [...columns, "contact_id"]),
              profile_version: sql<number>`customers.profile_version + case when ${changed} then 1 else 0 end`,
              profile_changed: changed,
            })
            .where(notStale("customers")),
        )
        .returning(CUSTOMER_COLUMNS)
        .returning(wasInserted.as("inserted")),
    )
    .with(WRITTEN.customers, () =>
      sql`(select * from customer_written union all
        select ${sql.join(CUSTOMER_COLUMNS.map((column) => (column === "profile_changed" ? sql`false` : sql.ref(`i.stored_${column}`))))}, false from incoming as i where i.held)`,
    )
    .with("link", (qb) =>
      qb
        .insertInto("customer_contacts")
        .columns(["customer_id", "contact_id"])
        // Only a write that created the customer or changed its profile (the phone is part of it) can bring a new contact.
        .expression((eb) =>
          eb
            .selectFrom(WRITTEN.customers)
            .innerJoin("contact", "contact.phone", "customer.phone")
            .select(["customer.id", "contact.id as contact_id"])
            .where("customer.profile_changed", "=", sql.lit(true)),
        )
        .onConflict((oc) => oc.doNothing()),
    );
}

/**
 * What a write of a record that embeds its customer (an order, a checkout)
 * carries, whatever its resource: its key, its price, when the shop changed
 * it and the optional fields records share (its tags as a list); its
 * customer's id only when that is stored already.
 */
export type EmbeddingValues = { external_id: string; customer_id?: number; total_price: string; source_updated_at?: string } & Omit<SharedOptionalColumns, "tags"> & { tags?: readonly string[] };

/** The SQL type of each of those columns. */
export const EMBEDDING_TYPES: Record<keyof EmbeddingValues, string> = {
  external_id: "text",
  customer_id: "bigint",
  total_price: "numeric",
  currency: "text",
  source_updated_at: "timestamptz",
  tags: "text[]",
  metadata: "jsonb",
  line_items: "jsonb",
};

/**
 * The records of a resource that embeds its customer (an order, a checkout)
 * one statement writes: of one set of fields, with distinct keys, and either
 * their customers with them (`writes`, as `writeCustomers` takes them, and
 * each record's customer key in `customerKeys`) or each linked to a stored
 * customer (its `customer_id`). `strict`: a record older than its stored one
 * fails the whole statement (a stale write), so that nothing of it stays, its
 * customer included; otherwise it is left out and the rest written.
 */
export type EmbeddingToWrite<Values> = {
  storeId: number;
  records: readonly Values[];
  writes?: readonly CustomerWrite[] | undefined;
  customerKeys?: readonly string[] | undefined;
  backfill: boolean;
  strict: boolean;
  /** Each record's id, key and `inserted` answered, no more (see `answerColumns`). */
  statusesOnly?: true | undefined;
};

/**
 * What a statement writing records that embed their customer starts from:
 * their customers' CTEs (`contact`, `customer`, `link`, see `withCustomers`)
 * when it writes them, the column that links each record to its customer
 * there, and how `unnestRows` joins it; nothing of that when each record
 * carries its stored customer's id. The customers' CTEs are read by name in
 * SQL only (the link by key, the triggers): kysely needs not know them.
 */
export function embedding<A extends EmbeddingToWrite<object>>(db: Executor, value: ValueOf<A>, writes: readonly CustomerWrite[] | undefined) {
  if (writes === undefined) return { base: db as QueryCreator<Database>, linked: [] as "customer_id"[], link: {}, tables: [] as Array<typeof WRITTEN.customers> };
  const base = withCustomers(db, value as ValueOf<A & CustomersToWrite>, fieldsOf(writes), writes.length === 1) as unknown as QueryCreator<Database>;
  return { base, linked: ["customer_id" as const], link: linkedByKey(value((args) => args.customerKeys), WRITTEN.customers), tables: [WRITTEN.customers] };
}

/** True when a synced field the write carries differs from the stored one. */
function profileChanged(columns: readonly (keyof CustomerFields)[]): RawBuilder<boolean> {
  const changed = SYNCED.filter((column) => columns.includes(column)).map(
    (column) => sql`${sql.ref(`customers.${column}`)} is distinct from ${sql.ref(`excluded.${column}`)}`,
  );
  return sql<boolean>`(${sql.join(changed, sql` or `)})`;
}

/**
 * Of these (external_id, time) pairs, the external_ids whose customer was
 * erased after the time: a push from before the erasure must not bring it
 * back. A customer created anew since is judged as any other.
 */
export async function erasedAfterMany(db: Executor, storeId: number, pushes: ReadonlyArray<{ externalId: string; time: string }>): Promise<Set<string>> {
  if (pushes.length === 0) return new Set();
  const pairs = sql.join(pushes.map(({ externalId, time }) => sql`(${externalId}::text, ${time}::timestamptz)`));
  const { rows } = await sql<{ external_id: string }>`
    select push.external_id from (values ${pairs}) as push(external_id, time)
    where exists (select 1 from customers where store_id = ${storeId} and external_id = push.external_id and deleted_at > push.time)
      -- Created anew since: then the push is judged against that customer, as any other.
      and not exists (select 1 from customers as active where active.store_id = ${storeId} and active.external_id = push.external_id and active.deleted_at is null)`.execute(db);
  return new Set(rows.map((row) => row.external_id));
}

/** The active customers with these keys. */
export function findActiveCustomers(db: Executor, storeId: number, externalIds: readonly string[]) {
  if (externalIds.length === 0) return Promise.resolve([]);
  return db.selectFrom("customers").selectAll().where("store_id", "=", storeId).where("external_id", "in", [...externalIds]).where("deleted_at", "is", null).execute();
}

/** A page of the store's customers, erased ones too, in the order they changed (see `inWindow`). */
export function listCustomers(db: Executor, storeId: number, window: PageWindow) {
  return inWindow(db.selectFrom("customers as cu").selectAll("cu").where("cu.store_id", "=", storeId), "cu", window).execute();
}

export function findActiveCustomer(db: Executor, storeId: number, externalId: string) {
  return db.selectFrom("customers").selectAll().where("store_id", "=", storeId).where("external_id", "=", externalId).where("deleted_at", "is", null).executeTakeFirst();
}

/** Every contact the customer has or ever had (an erasure clears each). */
function contactsOf(db: Executor, customerId: number) {
  return db
    .selectFrom("contacts")
    .select("id")
    .where((eb) =>
      eb.or([
        eb("id", "in", eb.selectFrom("customer_contacts").select("contact_id").where("customer_id", "=", customerId)),
        eb("id", "=", eb.selectFrom("customers").select("contact_id").where("id", "=", customerId)),
      ]),
    );
}

/**
 * Locks what an erasure changes in the lock order every writer follows: the
 * customer's contacts (every phone it ever had) in phone order, then the
 * customer; its jobs it never waits for (see `cancelUnheld`). A contact
 * linked between the first read and the customer's lock fails the erasure
 * with a `LockOrderConflict`, and it runs again.
 */
async function lockForErasure(db: Trx, storeId: number, externalId: string) {
  const found = await db
    .selectFrom("customers")
    .select(["id"])
    .where("store_id", "=", storeId)
    .where("external_id", "=", externalId)
    .where("deleted_at", "is", null)
    .executeTakeFirst();
  if (!found) return undefined;
  const locked = await contactsOf(db, found.id).orderBy("phone").forUpdate().execute();
  const customer = await db.selectFrom("customers").select(["id", "contact_id"]).where("id", "=", found.id).where("deleted_at", "is", null).forUpdate().executeTakeFirst();
  if (!customer) return undefined;
  const contactIds = (await contactsOf(db, customer.id).execute()).map((contact) => contact.id);
  const held = new Set(locked.map((contact) => contact.id));
  if (contactIds.some((id) => !held.has(id))) throw new LockOrderConflict("an erased customer's contacts");
  return { id: customer.id, contactIds };
}

/**
 * Erases the active customer with this key: personal fields cleared, the key
 * freed for a new customer (a phone key is personal data, so it goes too), the
 * link to its contact dropped. Returns the erased customer's id, if there was one.
 */
export async function eraseCustomer(db: Trx, storeId: number, externalId: string): Promise<number | undefined> {
  const customer = await lockForErasure(db, storeId, externalId);
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

  // Every contact of every phone the customer ever had: a shared one stays, but not with
  // the profile this customer may have synced to it; an unused one goes.
  await db.deleteFrom("customer_contacts").where("customer_id", "=", customer.id).execute();
  const contactIds = customer.contactIds;
  if (contactIds.length > 0) {
    // Only the profile this customer synced goes: another customer's on a phone it once had stays.
    await db
      .updateTable("contacts")
      .set({ first_name: null, last_name: null, email: null, locale: null, tags: textArray([]), lifetime_value: 0, orders_count: 0, synced_at: null, synced_customer_id: null })
      .where("id", "in", contactIds)
      .where((eb) => eb.or([eb("synced_customer_id", "=", customer.id), eb("synced_customer_id", "is", null)]))
      .execute();
    for (const contactId of contactIds) await deleteContactIfUnused(db, contactId);
  }
  return customer.id;
}

/**
 * A contact no active customer uses holds nothing but a phone of someone who
 * asked to be forgotten. A customer linking to it at this very moment wins:
 * the contact then stays.
 */
async function deleteContactIfUnused(db: Trx, contactId: number): Promise<void> {
  await inSavepoint(
    db,
    "contact_cleanup",
    () =>
      db
        .deleteFrom("contacts")
        .where("id", "=", contactId)
        .where((eb) => eb.not(eb.exists(eb.selectFrom("customers").select("id").where("contact_id", "=", contactId))))
        .execute(),
    isForeignKeyViolation,
  );
}
