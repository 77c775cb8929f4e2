import { afterAll, beforeAll } from "vitest";
import { startTestServer, type TestServer, type TestTenant } from "./helpers.js";

/**
 * The record tests' shared setup: one server and a store in the US (`tenant`),
 * with what their tests send and ask. A test file calls `withRecordsServer()`
 * once; the bindings below are its own.
 */
export let server: TestServer;
export let tenant: TestTenant;

export function withRecordsServer(): void {
  beforeAll(async () => {
    server = await startTestServer();
    tenant = await server.createTenant({ country: "US" });
  });
  afterAll(() => server?.close());
}

let seq = 0;
export const uid = (prefix: string) => `${prefix}-${Date.now()}-${++seq}`;
export const base = (storeId = tenant.store.id) => `/api/v1/stores/${storeId}`;
/** A response's time: ISO 8601, milliseconds, a numeric offset (never `Z`). */
export const OFFSET_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}[+-]\d{2}:\d{2}$/;

export const order = (fields: Record<string, unknown> = {}) => ({
  external_id: uid("order"),
  placed_at: "2026-11-22T09:30:00+01:00",
  total_price: 25,
  customer: { phone: "+14155552671" },
  ...fields,
});
export const checkout = (fields: Record<string, unknown> = {}) => ({
  external_id: uid("checkout"),
  abandoned_at: "2026-11-22T09:30:00Z",
  total_price: 80,
  customer: { phone: "+14155552671" },
  ...fields,
});

export const post = (resource: string, body: unknown, key = tenant.key, storeId = tenant.store.id) => server.request("POST", `${base(storeId)}/${resource}`, { key, body });
export const patch = (resource: string, externalId: string, body: unknown, key = tenant.key, storeId = tenant.store.id) =>
  server.request("PATCH", `${base(storeId)}/${resource}/${encodeURIComponent(externalId)}`, { key, body });

/** How many rows of the table have this external_id (any store). */
export async function count(table: "orders" | "checkouts" | "shipments" | "customers", externalId: string) {
  const rows = await server.db.selectFrom(table).select("id").where("external_id", "=", externalId).execute();
  return rows.length;
}
