import type { CustomerInput } from "@commerce-ingest/shared";
import type { AppError } from "../errors.js";
import { toMoney } from "../money.js";
import type { StoreContext } from "../tenancy/store-context.js";
import type { TriggerOptions } from "../automations/triggers.js";
import type { CustomerRow, Db, Executor } from "../db/types.js";
import { olderThanStored } from "../db/sql.js";
import type { Upserted } from "./calls.js";
import { byShape, onlyGroup, presentOnly, sharedOptionalColumns, type SharedOptional } from "./fields.js";
import { inGroups, writeRecords } from "./write-path.js";
import type * as repo from "./customers/customer.repository.js";
import { customerKey, customerWrite, upsertCustomersIn } from "./customers/customer.service.js";

/*
 * How orders and checkouts are written: each record with the customer it
 * embeds (upserted by the customer key rule, and linked), in one statement or
 * one transaction, by the one write path (see `writeRecords`).
 */

/** The customers embedded in records (orders, checkouts), written as they would be pushed alone one after the other. */
export type EmbeddedCustomers = { rowOf(customer: CustomerInput): CustomerRow & { inserted: boolean } };

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
  const merged = new Map<string, CustomerInput>();
  for (const customer of customers) {
    const key = customerKey(customer);
    merged.set(key, { ...merged.get(key), ...presentOnly({ ...customer, source_updated_at: undefined }) } as CustomerInput);
  }
  return [...merged.values()];
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
  const writes = onlyGroup(byShape(mergeEmbedded(inputs.map((input) => input.customer)).map(customerWrite), (write) => write.fields, (write) => write.key.external_id));
  if (!writes) return undefined;
  const customerOf = new Map(inputs.map((input) => [input.external_id, customerKey(input.customer)]));
  return { writes, keys: records.map((record) => customerOf.get(record.external_id) ?? "") };
}

/**
 * How a resource whose records embed their customer (orders, checkouts)
 * writes them (see `writeEmbedding`): its table, what an upsert writes of a
 * record, its one statement (see `EmbeddingToWrite`), how the stored records
 * are read, and how a row is answered.
 */
export type Embedding<Input, Values, Row, Record> = {
  table: "orders" | "checkouts";
  fields: (input: Input) => Values;
  write: (db: Executor, push: repo.EmbeddingToWrite<Values> & { recoveryDelaySeconds: number }) => Promise<Array<Row & { inserted: boolean }>>;
  stored: (db: Executor, storeId: number, keys: readonly string[]) => Promise<readonly Row[]>;
  toRecord: (row: Row) => Record;
};

type Embeds = { external_id: string; customer: CustomerInput; source_updated_at?: string | undefined };

/** What an upsert writes of any record that embeds its customer (see `EmbeddingValues`); absent fields are left out, so they keep their stored value. */
export function embeddingFields(input: Embeds & { total_price: number } & SharedOptional): repo.EmbeddingValues {
  return {
    external_id: input.external_id,
    total_price: toMoney(input.total_price),
    ...presentOnly({ source_updated_at: input.source_updated_at }),
    ...sharedOptionalColumns({ currency: input.currency, tags: input.tags, metadata: input.metadata, line_items: input.line_items }),
  };
}

/**
 * Records that embed their customer, with distinct external_ids, each with its
 * customer (upserted by the key rule and linked) and what they trigger, by the
 * one write path (see `writeRecords`): a push (a set of one), pushes
 * gathered, a batch or an import's chunk. In one statement with their
 * customers when both are of one set of fields each; otherwise in a
 * transaction: the stale records left out (their customers too), the
 * customers once each (see `upsertEmbeddedCustomers`), then the records.
 */
export function writeEmbedding<Input extends Embeds, Values extends { external_id: string }, Row extends { external_id: string }, Record>(
  embedding: Embedding<Input, Values, Row, Record>,
): (db: Db, store: StoreContext, inputs: readonly Input[], options: TriggerOptions) => Promise<Array<Upserted<Record> | AppError>> {
  const { table, fields, write, stored, toRecord } = embedding;
  return (db, store, inputs, options) => {
    const records = onlyGroup(byShape(inputs.map(fields), (record) => record, (record) => record.external_id));
    const customers = records && embeddedInOneGroup(inputs, records);
    const push = { storeId: store.id, backfill: options.backfill, recoveryDelaySeconds: store.recoveryDelaySeconds };
    return writeRecords(db, {
      keys: inputs.map((input) => input.external_id),
      together: customers && records && ((db) => write(db, { ...push, records, writes: customers.writes, customerKeys: customers.keys, strict: true })),
      separately: async (trx) => {
        // A record older than the stored one is not applied: nothing of it is written, its customer included.
        const older = await olderThanStored(trx, table, store.id, inputs);
        const applied = inputs.filter((input) => !older.has(input.external_id));
        const customers = await upsertEmbeddedCustomers(trx, store, applied.map((input) => input.customer), options);
        const linked = applied.map((input) => ({ ...fields(input), customer_id: customers.rowOf(input.customer).id }));
        return { written: await inGroups(linked, (record) => record.external_id, (records) => write(trx, { ...push, records, strict: false })) };
      },
      stored: (db, keys) => stored(db, store.id, keys),
      keyOf: (row) => row.external_id,
      toRecord,
    });
  };
}
