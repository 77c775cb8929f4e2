import type {
  Checkout,
  CheckoutInput,
  CheckoutPatch,
  Customer,
  CustomerInput,
  Order,
  OrderInput,
  OrderPatch,
  Shipment,
  ShipmentInput,
} from "@commerce-ingest/shared";
import type { ApiResult, CommerceIngestClient, RequestOptions, UpsertResult } from "./client.js";

const storePath = (storeId: number) => `/api/v1/stores/${encodeURIComponent(String(storeId))}`;
/** External ids may hold any character: `/`, spaces, `?`, `#`, `%`, non-ASCII. */
const idPath = (externalId: string) => encodeURIComponent(externalId);

async function upsert<T>(client: CommerceIngestClient, path: string, body: unknown, options?: RequestOptions): Promise<UpsertResult<T>> {
  const result = await client.request<T>("POST", path, body, options);
  return { ...result, created: result.status === 201 };
}

/** `POST /orders` and `PATCH /orders/{external_id}`. */
export class Orders {
  constructor(private readonly client: CommerceIngestClient) {}

  /** Creates or updates an order (key: its `external_id`), and upserts its customer. */
  upsert(storeId: number, order: OrderInput, options?: RequestOptions): Promise<UpsertResult<Order>> {
    return upsert(this.client, `${storePath(storeId)}/orders`, order, options);
  }

  /** Changes statuses, tags (replaced) or metadata of an existing order. @throws NotFoundError */
  update(storeId: number, externalId: string, patch: OrderPatch, options?: RequestOptions): Promise<ApiResult<Order>> {
    return this.client.request("PATCH", `${storePath(storeId)}/orders/${idPath(externalId)}`, patch, options);
  }
}

/** `POST /customers` and `DELETE /customers/{external_id}`. */
export class Customers {
  constructor(private readonly client: CommerceIngestClient) {}

  /** Creates or updates a customer (key: `external_id`, else its E.164 phone). */
  upsert(storeId: number, customer: CustomerInput, options?: RequestOptions): Promise<UpsertResult<Customer>> {
    return upsert(this.client, `${storePath(storeId)}/customers`, customer, options);
  }

  /** Erases a customer (privacy-law erasure). Succeeds also for an unknown or already erased one. */
  delete(storeId: number, externalId: string, options?: RequestOptions): Promise<ApiResult<null>> {
    return this.client.request("DELETE", `${storePath(storeId)}/customers/${idPath(externalId)}`, undefined, options);
  }
}

/** `POST /checkouts` and `PATCH /checkouts/{external_id}`. */
export class Checkouts {
  constructor(private readonly client: CommerceIngestClient) {}

  /** Creates or updates an abandoned checkout, and upserts its customer. */
  upsert(storeId: number, checkout: CheckoutInput, options?: RequestOptions): Promise<UpsertResult<Checkout>> {
    return upsert(this.client, `${storePath(storeId)}/checkouts`, checkout, options);
  }

  /** Sets status (e.g. `recovered`), recovery URL, tags or metadata. @throws NotFoundError */
  update(storeId: number, externalId: string, patch: CheckoutPatch, options?: RequestOptions): Promise<ApiResult<Checkout>> {
    return this.client.request("PATCH", `${storePath(storeId)}/checkouts/${idPath(externalId)}`, patch, options);
  }
}

/** `POST /shipments`. */
export class Shipments {
  constructor(private readonly client: CommerceIngestClient) {}

  /** Creates or updates a shipment linked to the order named by `order_external_id`. @throws ValidationError when there is no such order */
  upsert(storeId: number, shipment: ShipmentInput, options?: RequestOptions): Promise<UpsertResult<Shipment>> {
    return upsert(this.client, `${storePath(storeId)}/shipments`, shipment, options);
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
