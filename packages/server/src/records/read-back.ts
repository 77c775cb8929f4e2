import type { ErrorCode, OrderRecord, Page } from "@commerce-ingest/shared";
import { sql, type SelectQueryBuilder } from "kysely";
import { inWindow, type ChangeTable } from "../db/pages.js";
import type { Database, Db, Executor } from "../db/types.js";
import { AppError } from "../errors.js";
import type { StoreContext } from "../tenancy/access.js";
import { unstorableText } from "../text.js";
import { formatOptionalTimestamp, formatTimestamp } from "../db/sql.js";
import { listPage, type PageRequest } from "./pages.js";

/** How a resource's records are read back, one by one and a page at a time (a page's items may say more: `Item`). */
export type ReadBack<Record, Item = Record> = {
  /** What an unknown external_id answers. */
  notFound: ErrorCode;
  /** The stored record (`notFound` when there is none). */
  get(db: Db, store: StoreContext, externalId: string): Promise<Record>;
  /** A page of the store's records, in the order they changed. */
  list(db: Db, store: StoreContext, request: PageRequest): Promise<Page<Item>>;
};

type Stored = { id: number; change_at?: string };

/**
 * The read-back of a resource from one query of a store's rows: `rows` (its
 * table as `alias`, joined to what names its parent, all a record needs) and
 * `toRecord`, which makes a row the published record. Reading one adds its
 * external_id; a page adds the window (see `inWindow`).
 */
export function readBack<Row extends Stored, Record>(spec: {
  table: ChangeTable;
  alias: string;
  notFound: ErrorCode;
  rows: (db: Executor, storeId: number) => SelectQueryBuilder<Database, never, Row>;
  toRecord: (row: Row) => Record;
}): ReadBack<Record> {
  const { table, alias, notFound, rows, toRecord } = spec;
  return {
    notFound,
    async get(db, store, externalId) {
      // No stored record can have an id PostgreSQL cannot store.
      const row = unstorableText(externalId) ? undefined : ((await rows(db, store.id).where(sql<boolean>`${sql.ref(`${alias}.external_id`)} = ${externalId}`).executeTakeFirst()) as Row | undefined);
      if (!row) throw new AppError(notFound);
      return toRecord(row);
    },
    list(db, store, request) {
      return listPage<Row & { change_at: string }, Record>(db, table, store.id, request, (window) => inWindow(rows(db, store.id), alias, window).execute(), toRecord);
    },
  };
}

/** What a stored order or checkout reads back beyond its published fields: its customer's key, what the shop sent with it, and its times. */
export function embeddingRecord(row: { customer_external_id: string | null; line_items: unknown; metadata: unknown; source_updated_at: Date | null; updated_at: Date }) {
  return {
    customer_external_id: row.customer_external_id,
    line_items: (row.line_items ?? null) as OrderRecord["line_items"],
    metadata: (row.metadata ?? null) as OrderRecord["metadata"],
    source_updated_at: formatOptionalTimestamp(row.source_updated_at),
    updated_at: formatTimestamp(row.updated_at),
  };
}
