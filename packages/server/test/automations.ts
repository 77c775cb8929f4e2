import type { Flow } from "@commerce-ingest/shared";
import { sql } from "kysely";
import { afterAll, beforeAll, expect } from "vitest";
import type { Db } from "../src/db/types.js";
import * as tenants from "../src/tenancy/tenant.service.js";
import { checkoutBody, createTestDatabase, orderBody, startTestServer, type TestServer, type TestTenant } from "./helpers.js";

/**
 * The automation tests' shared setup: one server with its worker (recording the messages it
 * sends), a store whose recoveries come due at once (`tenant`) and one with the default delay
 * (`delayed`). A test file calls `withAutomationServer()` once; the bindings below are its own.
 */
export let server: TestServer;
export let tenant: TestTenant;
export let delayed: TestTenant;

export function withAutomationServer(): void {
  beforeAll(async () => {
    server = await startTestServer({ worker: {} });
    tenant = await newStore({ recovery_delay_seconds: 0 });
    delayed = await server.createTenant();
  });
  afterAll(() => server?.close());
}

/** Another team with its store and key on the file's server, the store set up as given. */
export async function newStore(settings: Parameters<typeof tenants.updateStore>[2]): Promise<TestTenant> {
  const created = await server.createTenant();
  await tenants.updateStore(server.db, created.store.id, settings);
  return created;
}

let phoneSeq = 100;
/** A phone no other customer of the file has (each file has a database of its own). */
export const newPhone = () => `+1415555${String(1000 + ++phoneSeq).slice(-4)}`;

export const push = (resource: string, body: unknown, t = tenant, headers: Record<string, string> = {}) =>
  server.request("POST", `/api/v1/stores/${t.store.id}/${resource}`, { key: t.key, body, headers });
export const patch = (resource: string, id: string, body: unknown, t = tenant) =>
  server.request("PATCH", `/api/v1/stores/${t.store.id}/${resource}/${encodeURIComponent(id)}`, { key: t.key, body });

export const order = (phone: string, fields: Record<string, unknown> = {}) => orderBody({ total_price: 42.5, currency: "eur", customer: { phone, first_name: "Ada" }, ...fields });
export const checkout = (phone: string, fields: Record<string, unknown> = {}) =>
  checkoutBody({ recovery_url: "https://shop.example/recover/xyz", customer: { phone, first_name: "Ada" }, ...fields });

/** The messages a flow sent for a record, with the status of the job that sent each. */
export function messagesFor(flow: Flow, recordExternalId: string) {
  return server.db
    .selectFrom("messages as m")
    .innerJoin("automation_jobs as j", "j.id", "m.job_id")
    .select(["m.id", "m.content", "m.to_phone", "m.status", "j.status as job_status"])
    .where("j.flow", "=", flow)
    .where("j.record_external_id", "=", recordExternalId)
    .execute();
}

export function jobsFor(flow: Flow, recordExternalId: string, db = server.db) {
  return db.selectFrom("automation_jobs").selectAll().where("flow", "=", flow).where("record_external_id", "=", recordExternalId).orderBy("id").execute();
}

/** Waits until every due job of the store is finished one way or another (judged by the database's clock). */
export async function settled(storeId = tenant.store.id) {
  const unfinished = () =>
    server.db
      .selectFrom("automation_jobs")
      .select("id")
      .where("store_id", "=", storeId)
      .where((eb) => eb.or([eb("status", "=", "running"), eb.and([eb("status", "=", "pending"), eb("run_at", "<=", sql<Date>`now()`)])]))
      .execute();
  await expect.poll(async () => (await unfinished()).length, { interval: 25 }).toBe(0);
}

/**
 * A prepared statement's parameter written into its `execute` as SQL (plan tests): a number or flag as it is,
 * null as null, a string quoted, anything else as its JSON, quoted.
 */
export const sqlLiteral = (value: unknown): string =>
  value === null ? "null" : typeof value === "number" || typeof value === "boolean" ? String(value) : `'${(typeof value === "string" ? value : JSON.stringify(value)).replace(/'/g, "''")}'`;

/**
 * Runs `check` on a fresh database of its own with one team and one store (a
 * single shop's service), whose statistics a plan's test may set as it likes.
 */
export async function withOneStore(check: (db: Db, storeId: number) => Promise<void>): Promise<void> {
  const database = await createTestDatabase();
  try {
    const { db } = database.handle;
    const store = await sql<{ id: number }>`
      with team as (insert into teams (name) values ('plan') returning id)
      insert into stores (team_id, name) select id, 'plan' from team returning id`.execute(db);
    const storeId = store.rows[0]?.id;
    if (storeId === undefined) throw new Error("no store");
    await check(db, storeId);
  } finally {
    await database.drop();
  }
}
