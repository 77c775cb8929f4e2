import { CommerceIngestError } from "./errors.js";
import type { Imports } from "./imports.js";
import { storePath, type ApiResult, type RequestOptions, type Transport, type UpsertResult } from "./transport.js";
import type {
  BatchResult,
  Checkout,
  CheckoutInput,
  CheckoutPatch,
  CheckoutRecord,
  Customer,
  CustomerInput,
  CustomerListItem,
  CustomerRecord,
  Order,
  OrderInput,
  OrderPatch,
  OrderRecord,
  Page,
  Shipment,
  ShipmentInput,
  ShipmentRecord,
} from "./types.js";

/** External ids may hold any character: `/`, spaces, `?`, `#`, `%`, non-ASCII. */
const idPath = (externalId: string) => encodeURIComponent(externalId);

/** The most records the API takes in one batch. */
export const BATCH_LIMIT = 1000;

/** The most bytes of JSON one batch request carries by default: under the service's default body limit (1 MiB). */
export const BATCH_MAX_BYTES = 1_000_000;

/** Options of `upsertMany`: those of any call, and how to split. */
export type BatchOptions = RequestOptions & {
  /** Records per request, 1 to 1,000 (default 1,000). */
  batchSize?: number | undefined;
  /**
   * Bytes of JSON per request (default 1,000,000, under the service's default
   * 1 MiB body limit): a batch closes at whichever of `batchSize` and this
   * comes first, so realistic orders of 1 to 3 KB never cross the limit.
   */
  maxBatchBytes?: number | undefined;
  /** Called after each batch with the running totals. */
  onProgress?: ((progress: { done: number; total: number; created: number; updated: number; failed: number }) => void) | undefined;
};

/**
 * Any number of records through the batch endpoint, `batchSize` at a time, in
 * order; one result per record. An item refused (422) or not stored (5xx) is
 * in the results; a request that fails as a whole throws (nothing of that
 * batch was stored), after the batches before it were stored.
 */
/**
 * The items split into batches of at most `batchSize` records and
 * `maxBytes` bytes of JSON (`{"items":[...]}`); a record larger than that
 * alone goes alone (the service then answers 413).
 */
function* batches(items: readonly unknown[], batchSize: number, maxBytes: number): Generator<unknown[]> {
  const encoder = new TextEncoder();
  const envelope = encoder.encode('{"items":[]}').length;
  let batch: unknown[] = [];
  let bytes = envelope;
  for (const item of items) {
    const size = encoder.encode(JSON.stringify(item)).length;
    // After the first record, each takes a comma too.
    if (batch.length > 0 && (batch.length >= batchSize || bytes + 1 + size > maxBytes)) {
      yield batch;
      batch = [];
      bytes = envelope;
    }
    bytes += (batch.length > 0 ? 1 : 0) + size;
    batch.push(item);
  }
  if (batch.length > 0) yield batch;
}

async function upsertMany<T>(client: Transport, path: string, items: readonly unknown[], options: BatchOptions = {}): Promise<BatchResult<T>> {
  const { batchSize = BATCH_LIMIT, maxBatchBytes = BATCH_MAX_BYTES, onProgress, idempotencyKey, ...request } = options;
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > BATCH_LIMIT) throw new CommerceIngestError(`batchSize must be a whole number from 1 to ${BATCH_LIMIT}`);
  if (!Number.isInteger(maxBatchBytes) || maxBatchBytes < 1) throw new CommerceIngestError("maxBatchBytes must be a whole number of bytes");
  const total: BatchResult<T> = { results: [], counts: { created: 0, updated: 0, failed: 0 } };
  let index = 0;
  for (const batch of batches(items, batchSize, maxBatchBytes)) {
    const key = idempotencyKey === undefined ? undefined : `${idempotencyKey}:${index++}`;
    const { data } = await client.request<BatchResult<T>>("POST", `${path}/batch`, { items: batch }, { ...request, idempotencyKey: key });
    total.results.push(...data.results);
    total.counts.created += data.counts.created;
    total.counts.updated += data.counts.updated;
    total.counts.failed += data.counts.failed;
    onProgress?.({ done: total.results.length, total: items.length, ...total.counts });
  }
  return total;
}

/** What a list asks for: records changed after a time, so many a page, from a page's cursor. */
export type ListParams = {
  /** Only records last changed after this time (a `Date`, or ISO 8601 with a zone). */
  updatedAfter?: Date | string | undefined;
  /** Records per page, 1 to 1,000 (the API's default: 100). */
  limit?: number | undefined;
  /** Where to start: a page's `next_cursor`. */
  cursor?: string | undefined;
};

/**
 * The records of a list, every page of it: iterate it with `for await` and it
 * fetches the next page as you reach it, until `next_cursor` is null. Records
 * come in the order they last changed; one changed while you page comes again
 * later, in its newest form. `pages()` gives the pages themselves.
 */
export type RecordList<T> = AsyncIterable<T> & {
  /** Each page, in order, with its `next_cursor` (save it to resume from there). */
  pages(): AsyncIterable<Page<T>>;
};

function listQuery(params: ListParams): string {
  const query = new URLSearchParams();
  if (params.updatedAfter !== undefined) query.set("updated_after", params.updatedAfter instanceof Date ? params.updatedAfter.toISOString() : params.updatedAfter);
  if (params.limit !== undefined) query.set("limit", String(params.limit));
  if (params.cursor !== undefined) query.set("cursor", params.cursor);
  const text = query.toString();
  return text ? `?${text}` : "";
}

function listPage<T>(client: Transport, path: string, params: ListParams = {}, options?: RequestOptions): Promise<ApiResult<Page<T>>> {
  return client.request<Page<T>>("GET", `${path}${listQuery(params)}`, undefined, options);
}

function listAll<T>(client: Transport, path: string, params: ListParams = {}, options?: RequestOptions): RecordList<T> {
  async function* pages(): AsyncGenerator<Page<T>> {
    let cursor = params.cursor;
    let pause = 0;
    do {
      const { data: page } = await listPage<T>(client, path, { ...params, cursor }, options);
      if (page.data.length > 0) yield page;
      // An empty page with a cursor: the service holds back changes a write still under way may precede; ask again shortly.
      pause = page.data.length > 0 ? 0 : Math.min(2_000, Math.max(100, pause * 2));
      if (page.next_cursor !== null && pause > 0) await new Promise((resolve) => setTimeout(resolve, pause));
      cursor = page.next_cursor ?? undefined;
    } while (cursor !== undefined);
  }
  return {
    pages,
    async *[Symbol.asyncIterator]() {
      for await (const page of pages()) yield* page.data;
    },
  };
}

async function upsert<T>(client: Transport, path: string, body: unknown, options?: RequestOptions): Promise<UpsertResult<T>> {
  const result = await client.request<T>("POST", path, body, options);
  return { ...result, created: result.status === 201, stale: result.headers.get("x-stale-write") === "ignored" };
}

/** `POST /orders`, `PATCH /orders/{external_id}` and `GET /orders/{external_id}`. */
export class Orders {
  constructor(private readonly client: Transport) {}

  /**
   * The store's orders, as read back one by one, every page: `for await (const record of ...list(storeId))`.
   * In the order they last changed; see `RecordList`.
   */
  list(storeId: number, params?: ListParams, options?: RequestOptions): RecordList<OrderRecord> {
    return listAll(this.client, `${storePath(storeId)}/orders`, params, options);
  }

  /** One page of `list`: its records and `next_cursor` (`null`: nothing more has changed, for now). */
  listPage(storeId: number, params?: ListParams, options?: RequestOptions): Promise<ApiResult<Page<OrderRecord>>> {
    return listPage(this.client, `${storePath(storeId)}/orders`, params, options);
  }

  /** Creates or updates an order (key: its `external_id`), and upserts its customer. */
  upsert(storeId: number, order: OrderInput, options?: RequestOptions): Promise<UpsertResult<Order>> {
    return upsert(this.client, `${storePath(storeId)}/orders`, order, options);
  }

  /** Any number of orders through `POST /orders/batch`, 1,000 per request by default: one result per record, in order. */
  upsertMany(storeId: number, orders: readonly OrderInput[], options?: BatchOptions): Promise<BatchResult<Order>> {
    return upsertMany(this.client, `${storePath(storeId)}/orders`, orders, options);
  }

  /** Changes statuses, tags (replaced) or metadata of an existing order. @throws NotFoundError */
  update(storeId: number, externalId: string, patch: OrderPatch, options?: RequestOptions): Promise<ApiResult<Order>> {
    return this.client.request("PATCH", `${storePath(storeId)}/orders/${idPath(externalId)}`, patch, options);
  }

  /** The order as stored: placed_at, line items, metadata, its customer's key. @throws NotFoundError (`ORDER_NOT_FOUND`) */
  retrieve(storeId: number, externalId: string, options?: RequestOptions): Promise<ApiResult<OrderRecord>> {
    return this.client.request("GET", `${storePath(storeId)}/orders/${idPath(externalId)}`, undefined, options);
  }
}

/** `POST /customers`, `DELETE /customers/{external_id}` and `GET /customers/{external_id}`. */
export class Customers {
  constructor(private readonly client: Transport) {}

  /**
   * The store's customers, erased ones too, without personal data (`erased_at` set), every page: `for await (const record of ...list(storeId))`.
   * In the order they last changed; see `RecordList`.
   */
  list(storeId: number, params?: ListParams, options?: RequestOptions): RecordList<CustomerListItem> {
    return listAll(this.client, `${storePath(storeId)}/customers`, params, options);
  }

  /** One page of `list`: its records and `next_cursor` (`null`: nothing more has changed, for now). */
  listPage(storeId: number, params?: ListParams, options?: RequestOptions): Promise<ApiResult<Page<CustomerListItem>>> {
    return listPage(this.client, `${storePath(storeId)}/customers`, params, options);
  }

  /** Creates or updates a customer (key: `external_id`, else its E.164 phone). */
  upsert(storeId: number, customer: CustomerInput, options?: RequestOptions): Promise<UpsertResult<Customer>> {
    return upsert(this.client, `${storePath(storeId)}/customers`, customer, options);
  }

  /** Any number of customers through `POST /customers/batch`, 1,000 per request by default: one result per record, in order. */
  upsertMany(storeId: number, customers: readonly CustomerInput[], options?: BatchOptions): Promise<BatchResult<Customer>> {
    return upsertMany(this.client, `${storePath(storeId)}/customers`, customers, options);
  }

  /** Erases a customer (privacy-law erasure). Succeeds also for an unknown or already erased one. */
  delete(storeId: number, externalId: string, options?: RequestOptions): Promise<ApiResult<null>> {
    return this.client.request("DELETE", `${storePath(storeId)}/customers/${idPath(externalId)}`, undefined, options);
  }

  /** The customer as stored, with the E.164 phone its phone became. @throws NotFoundError (`CUSTOMER_NOT_FOUND`, also once erased) */
  retrieve(storeId: number, externalId: string, options?: RequestOptions): Promise<ApiResult<CustomerRecord>> {
    return this.client.request("GET", `${storePath(storeId)}/customers/${idPath(externalId)}`, undefined, options);
  }
}

/** `POST /checkouts`, `PATCH /checkouts/{external_id}` and `GET /checkouts/{external_id}`. */
export class Checkouts {
  constructor(private readonly client: Transport) {}

  /**
   * The store's checkouts, as read back one by one, every page: `for await (const record of ...list(storeId))`.
   * In the order they last changed; see `RecordList`.
   */
  list(storeId: number, params?: ListParams, options?: RequestOptions): RecordList<CheckoutRecord> {
    return listAll(this.client, `${storePath(storeId)}/checkouts`, params, options);
  }

  /** One page of `list`: its records and `next_cursor` (`null`: nothing more has changed, for now). */
  listPage(storeId: number, params?: ListParams, options?: RequestOptions): Promise<ApiResult<Page<CheckoutRecord>>> {
    return listPage(this.client, `${storePath(storeId)}/checkouts`, params, options);
  }

  /** Creates or updates an abandoned checkout, and upserts its customer. */
  upsert(storeId: number, checkout: CheckoutInput, options?: RequestOptions): Promise<UpsertResult<Checkout>> {
    return upsert(this.client, `${storePath(storeId)}/checkouts`, checkout, options);
  }

  /** Any number of checkouts through `POST /checkouts/batch`, 1,000 per request by default: one result per record, in order. */
  upsertMany(storeId: number, checkouts: readonly CheckoutInput[], options?: BatchOptions): Promise<BatchResult<Checkout>> {
    return upsertMany(this.client, `${storePath(storeId)}/checkouts`, checkouts, options);
  }

  /** Sets status (e.g. `recovered`), recovery URL, tags or metadata. @throws NotFoundError */
  update(storeId: number, externalId: string, patch: CheckoutPatch, options?: RequestOptions): Promise<ApiResult<Checkout>> {
    return this.client.request("PATCH", `${storePath(storeId)}/checkouts/${idPath(externalId)}`, patch, options);
  }

  /** The checkout as stored. @throws NotFoundError (`CHECKOUT_NOT_FOUND`) */
  retrieve(storeId: number, externalId: string, options?: RequestOptions): Promise<ApiResult<CheckoutRecord>> {
    return this.client.request("GET", `${storePath(storeId)}/checkouts/${idPath(externalId)}`, undefined, options);
  }
}

/** `POST /shipments` and `GET /shipments/{external_id}`. */
export class Shipments {
  constructor(private readonly client: Transport) {}

  /**
   * The store's shipments, as read back one by one, every page: `for await (const record of ...list(storeId))`.
   * In the order they last changed; see `RecordList`.
   */
  list(storeId: number, params?: ListParams, options?: RequestOptions): RecordList<ShipmentRecord> {
    return listAll(this.client, `${storePath(storeId)}/shipments`, params, options);
  }

  /** One page of `list`: its records and `next_cursor` (`null`: nothing more has changed, for now). */
  listPage(storeId: number, params?: ListParams, options?: RequestOptions): Promise<ApiResult<Page<ShipmentRecord>>> {
    return listPage(this.client, `${storePath(storeId)}/shipments`, params, options);
  }

  /** Creates or updates a shipment linked to the order named by `order_external_id`. @throws ValidationError when there is no such order */
  upsert(storeId: number, shipment: ShipmentInput, options?: RequestOptions): Promise<UpsertResult<Shipment>> {
    return upsert(this.client, `${storePath(storeId)}/shipments`, shipment, options);
  }

  /** Any number of shipments through `POST /shipments/batch`, 1,000 per request by default: one result per record, in order. */
  upsertMany(storeId: number, shipments: readonly ShipmentInput[], options?: BatchOptions): Promise<BatchResult<Shipment>> {
    return upsertMany(this.client, `${storePath(storeId)}/shipments`, shipments, options);
  }

  /** The shipment as stored, with its order's external_id. @throws NotFoundError (`SHIPMENT_NOT_FOUND`) */
  retrieve(storeId: number, externalId: string, options?: RequestOptions): Promise<ApiResult<ShipmentRecord>> {
    return this.client.request("GET", `${storePath(storeId)}/shipments/${idPath(externalId)}`, undefined, options);
  }
}

/** A resource whose methods take the store id first, with that argument already given. */
export type StoreBound<R> = {
  [K in keyof R]: R[K] extends (storeId: number, ...rest: infer A) => infer Result ? (...rest: A) => Result : never;
};

export type StoreScope = {
  readonly storeId: number;
  readonly orders: StoreBound<Orders>;
  readonly customers: StoreBound<Customers>;
  readonly checkouts: StoreBound<Checkouts>;
  readonly shipments: StoreBound<Shipments>;
  readonly imports: StoreBound<Imports>;
};

export function bindStore<R extends object>(resource: R, storeId: number): StoreBound<R> {
  const methods = Object.getOwnPropertyNames(Object.getPrototypeOf(resource)).filter((name) => name !== "constructor");
  const bound: Record<string, unknown> = {};
  for (const name of methods) {
    const method: unknown = (resource as Record<string, unknown>)[name];
    if (typeof method === "function") bound[name] = (...rest: unknown[]): unknown => (method as (...args: unknown[]) => unknown).call(resource, storeId, ...rest);
  }
  return bound as StoreBound<R>;
}
