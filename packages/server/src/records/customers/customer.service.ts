import { type Customer, type CustomerInput, type CustomerListItem, type CustomerRecord, customerInputSchema, customerSchema } from "@commerce-ingest/shared";
import { AppError } from "../../errors.js";
import { formatOptionalTimestamp, formatTimestamp, olderThanStored, inTransaction } from "../../db/sql.js";
import type { StoreContext } from "../../tenancy/access.js";
import { customerErased } from "../../automations/erasure.js";
import type { TriggerOptions } from "../../automations/triggers.js";
import type { CustomerRow, Db, Executor } from "../../db/types.js";
import type { Upserted, WriteOptions } from "../calls.js";
import { byShape, onlyGroup, uniqueTags, upsertSpec, writeRecords } from "../write-path.js";
import { unstorableText } from "../../text.js";
import { listPage } from "../pages.js";
import type { ReadBack } from "../read-back.js";
import * as repo from "./customer.repository.js";

export function toCustomer(row: repo.WrittenCustomer): Customer {
  return {
    external_id: row.external_id ?? "",
    store_id: row.store_id,
    first_name: row.first_name,
    last_name: row.last_name,
    email: row.email,
    locale: row.locale,
    tags: row.tags,
    lifetime_value: row.lifetime_value,
    orders_count: row.orders_count,
  };
}

/**
 * What an upsert writes of a customer, by the key rule: its `external_id`,
 * else its phone, which arrives in E.164 (the body parser normalised it in the
 * store's country). Absent fields are left out, so they keep their stored value.
 */
export function toCustomerWrite(input: CustomerInput): repo.CustomerWrite {
  const phone = input.phone;
  const key = input.external_id ? { external_id: input.external_id, keyed_by_phone: false } : { external_id: phone, keyed_by_phone: true };
  const fields: repo.CustomerFields = { phone };
  if (input.first_name !== undefined) fields.first_name = input.first_name;
  if (input.last_name !== undefined) fields.last_name = input.last_name;
  if (input.email !== undefined) fields.email = input.email;
  if (input.locale !== undefined) fields.locale = input.locale;
  if (input.tags !== undefined) fields.tags = uniqueTags(input.tags);
  // An integer cleared with null goes back to its starting value.
  if (input.lifetime_value !== undefined) fields.lifetime_value = input.lifetime_value ?? 0;
  if (input.orders_count !== undefined) fields.orders_count = input.orders_count ?? 0;
  if (input.source_updated_at !== undefined) fields.source_updated_at = input.source_updated_at;
  return { key, fields };
}

/**
 * Upserts many customers with distinct keys inside the caller's transaction:
 * one statement per set of fields sent (a batch from one shop usually has
 * one), which also records the contact syncs they call for. Returns the
 * customers written, by key; a write older than its stored customer is not
 * among them.
 */
export async function upsertCustomersIn(
  trx: Executor,
  store: StoreContext,
  inputs: readonly CustomerInput[],
  options: TriggerOptions,
): Promise<Map<string, repo.WrittenCustomerRow>> {
  const rows = new Map<string, repo.WrittenCustomerRow>();
  const groups = byShape(inputs.map(toCustomerWrite), (write) => write.fields, (write) => write.key.external_id);
  // Each group's statement takes its contacts in phone order; over several groups, they are taken
  // all together first, so that two batches sharing contacts never wait for each other in a cycle.
  if (groups.length > 1) await repo.takeContacts(trx, store.id, inputs.map((input) => input.phone));
  for (const writes of groups) {
    for (const row of await repo.writeCustomers(trx, { storeId: store.id, writes, backfill: options.backfill, strict: false })) rows.set(row.external_id ?? "", row);
  }
  return rows;
}

function toCustomerRecord(row: CustomerRow): CustomerRecord {
  return {
    ...toCustomer(row),
    phone: row.phone,
    source_updated_at: formatOptionalTimestamp(row.source_updated_at),
    created_at: formatTimestamp(row.created_at),
    updated_at: formatTimestamp(row.updated_at),
  };
}

/**
 * Customers read back with their E.164 phones: one active customer (404
 * `Customer not found` when absent or erased), or a page of the store's
 * customers in the order they changed, erased ones too, as the erasure left
 * them: no personal field, and no key when the key was their phone.
 */
export const customerReadBack: ReadBack<CustomerRecord, CustomerListItem> = {
  notFound: "CUSTOMER_NOT_FOUND",
  async get(db, store, externalId) {
    const row = unstorableText(externalId) ? undefined : await repo.findActiveCustomer(db, store.id, externalId);
    if (!row) throw new AppError("CUSTOMER_NOT_FOUND");
    return toCustomerRecord(row);
  },
  list: (db, store, request) =>
    listPage(db, "customers", store.id, request, (window) => repo.listCustomers(db, store.id, window), (row) => ({
      ...toCustomerRecord(row),
      external_id: row.external_id,
      erased_at: formatOptionalTimestamp(row.deleted_at),
    })),
};

/** The published response of a customer that is not there: the key, every other field empty. */
function emptyCustomer(storeId: number, externalId: string): Customer {
  return { external_id: externalId, store_id: storeId, first_name: null, last_name: null, email: null, locale: null, tags: [], lifetime_value: 0, orders_count: 0 };
}

/** The key a customer push is stored under: its external_id, else its E.164 phone. */
export const customerKey = (input: CustomerInput): string => input.external_id || input.phone;

/**
 * Customers with distinct keys, with their contacts and the contact syncs they
 * call for, by the one write path (see `writeRecords`): a push (a set of
 * one), pushes gathered, a batch or an import's chunk. A push from before its
 * customer's erasure is not applied (it must not bring the erased profile
 * back): it answers the key with every other field empty. The rest go in one
 * statement when they carry one set of fields; otherwise in a transaction,
 * the stale ones left out, contact and all.
 */
export async function upsertCustomers(db: Db, store: StoreContext, inputs: readonly CustomerInput[], options: WriteOptions): Promise<Array<Upserted<Customer> | AppError>> {
  const checked = inputs.flatMap((input) => (input.source_updated_at !== undefined && input.external_id ? [{ externalId: input.external_id, time: input.source_updated_at }] : []));
  const erased = await repo.erasedAfterMany(db, store.id, checked);
  const isErased = (input: CustomerInput) => typeof input.external_id === "string" && erased.has(input.external_id);
  const live = inputs.filter((input) => !isErased(input));
  const writes = onlyGroup(byShape(live.map(toCustomerWrite), (write) => write.fields, (write) => write.key.external_id));
  const written =
    live.length === 0
      ? []
      : await writeRecords(db, {
          keys: live.map(customerKey),
          together: writes && ((db) => repo.writeCustomers(db, { storeId: store.id, writes, backfill: options.backfill, strict: true, statusesOnly: options.statusesOnly })),
          separately: async (trx) => {
            const older = await olderThanStored(trx, "customers", store.id, live.map((input) => ({ external_id: customerKey(input), source_updated_at: input.source_updated_at })));
            return { written: [...(await upsertCustomersIn(trx, store, live.filter((input) => !older.has(customerKey(input))), options)).values()] };
          },
          stored: (db, keys) => repo.findActiveCustomers(db, store.id, keys),
          keyOf: (row) => row.external_id ?? "",
          toRecord: toCustomer,
          statusesOnly: options.statusesOnly,
        });
  let next = 0;
  return inputs.map((input) => (isErased(input) ? { record: emptyCustomer(store.id, input.external_id ?? ""), created: false, stale: true } : (written[next++] ?? notAnswered())));
}

function notAnswered(): never {
  throw new Error("a customer was not answered");
}

/** Erasure is idempotent: an unknown or already erased customer is not an error. */
export async function eraseCustomer(db: Db, store: StoreContext, externalId: string): Promise<void> {
  // An id PostgreSQL cannot store names no customer: nothing to erase.
  if (unstorableText(externalId)) return;
  await inTransaction(db, async (trx) => {
    const erased = await repo.eraseCustomer(trx, store.id, externalId);
    if (erased !== undefined) await customerErased(trx, erased);
  });
}

/** The rows a customer's write may touch (see `UpsertSpec.touches`): the customer, and the contact of its phone. */
export function customerTouches(customer: CustomerInput): string[] {
  return [`customers:${customerKey(customer)}`, `phones:${customer.phone}`];
}

/** How customers are written: a push, a batch and an import's lines alike. */
export const customerWrite = upsertSpec({
  resource: "customers",
  body: customerInputSchema,
  phonePaths: [["phone"]],
  // The phone in national form: read in the store's country (a store in the US here).
  example: {
    external_id: "c-1001",
    phone: "(415) 555-2671",
    first_name: "Ada",
    last_name: "Lovelace",
    email: "ada@example.com",
    locale: "en-US",
    tags: ["vip", "newsletter"],
    lifetime_value: 125050,
    orders_count: 3,
  },
  output: customerSchema,
  keyOf: customerKey,
  touches: customerTouches,
  write: (call, bodies) => upsertCustomers(call.db, call.store, bodies, call.options),
});

/** The customers embedded in records (orders, checkouts), written as they would be pushed alone one after the other. */
export type EmbeddedCustomers = { rowOf(customer: CustomerInput): repo.WrittenCustomerRow };

/**
 * Upserts the customers embedded in many records at once, inside the caller's
 * transaction. A customer embedded in several records is written once, with
 * its fields merged in order (the last one sent wins), as the same pushes one
 * after the other leave it; it triggers one contact sync for the result. An
 * embedded customer follows its record: the record's source time decides, not
 * the customer's.
 */
export async function upsertEmbeddedCustomers(trx: Executor, store: StoreContext, customers: readonly CustomerInput[], options: TriggerOptions): Promise<EmbeddedCustomers> {
  const written = await upsertCustomersIn(trx, store, mergeEmbedded(customers), options);
  return {
    rowOf: (customer) => {
      const row = written.get(customerKey(customer));
      if (!row) throw new Error("an embedded customer was not written");
      return row;
    },
  };
}

/**
 * The customers embedded in records, one per key, each with its fields merged
 * in order (the last one sent wins), without a source time of its own (an
 * embedded customer follows its record).
 */
export function mergeEmbedded(customers: readonly CustomerInput[]): CustomerInput[] {
  // One object per key, each later field written over the one before: a record's customer is mostly its own.
  const merged = new Map<string, Record<string, unknown>>();
  for (const customer of customers) {
    const key = customerKey(customer);
    let into = merged.get(key);
    if (!into) merged.set(key, (into = {}));
    for (const field in customer) {
      const value = customer[field as keyof CustomerInput];
      if (value !== undefined && field !== "source_updated_at") into[field] = value;
    }
  }
  return [...merged.values()] as CustomerInput[];
}

/**
 * The customers embedded in records that one statement writes with them, and
 * each of `records`' customer key in their order (to link each record to its
 * customer there); nothing when those customers are not of one set of fields
 * (see `onlyGroup`).
 */
export function embeddedInOneGroup(
  inputs: ReadonlyArray<{ external_id: string; customer: CustomerInput; source_updated_at?: string | undefined }>,
  records: ReadonlyArray<{ external_id: string }>,
): { writes: repo.CustomerWrite[]; keys: string[] } | undefined {
  const writes = onlyGroup(byShape(mergeEmbedded(inputs.map((input) => input.customer)).map(toCustomerWrite), (write) => write.fields, (write) => write.key.external_id));
  if (!writes) return undefined;
  const customerOf = new Map(inputs.map((input) => [input.external_id, customerKey(input.customer)]));
  return { writes, keys: records.map((record) => customerOf.get(record.external_id) ?? "") };
}
