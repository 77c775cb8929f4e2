import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { decideMany, postPurchase } from "./flows/index.js";
import { findCustomersForSync, lockRecipientContacts } from "./flows/flow.repository.js";
import { retries } from "../db/index.js";
import { LockOrderConflict } from "../db/sql.js";
import { checkout, jobsFor, newPhone, order, push, server, settled, tenant, withAutomationServer } from "../../test/automations.js";
import { retriesCounted, testDb, uid } from "../../test/helpers.js";

withAutomationServer();

describe("erased customers", () => {
  it("get nothing: pending jobs cancelled, messages already sent redacted", async () => {
    const phone = newPhone();
    const id = uid("gone");
    await push("orders", order(phone, { customer: { external_id: id, phone } }));
    await settled();
    const customer = await server.db.selectFrom("customers").select("id").where("external_id", "=", id).executeTakeFirstOrThrow();
    await server.request("DELETE", `/api/v1/stores/${tenant.store.id}/customers/${id}`, { key: tenant.key });
    const sent = await server.db.selectFrom("messages").select(["to_phone", "content"]).where("to_phone", "=", phone).execute();
    expect(sent).toHaveLength(0);
    const redacted = await server.db.selectFrom("messages").select(["to_phone", "content"]).where("customer_id", "=", customer.id).execute();
    expect(redacted.length).toBeGreaterThanOrEqual(2);
    for (const message of redacted) expect(message).toEqual({ to_phone: null, content: { redacted: true } });
  });

  it("leave no phone behind: a phone-keyed customer's runs lose their id, a shared contact loses the synced profile", async () => {
    const phone = newPhone();
    await push("customers", { external_id: uid("other"), phone });
    await settled();
    // The phone-keyed customer syncs last: the shared contact shows its profile.
    await push("customers", { phone, first_name: "Shared", lifetime_value: 50 });
    await settled();
    const contact = await server.db.selectFrom("contacts").selectAll().where("store_id", "=", tenant.store.id).where("phone", "=", phone).executeTakeFirstOrThrow();
    expect(contact.synced_at).not.toBeNull();
    await server.request("DELETE", `/api/v1/stores/${tenant.store.id}/customers/${encodeURIComponent(phone)}`, { key: tenant.key });
    expect(await jobsFor("contact_sync", phone)).toHaveLength(0);
    const after = await server.db.selectFrom("contacts").selectAll().where("id", "=", contact.id).executeTakeFirstOrThrow();
    expect(after).toMatchObject({ first_name: null, lifetime_value: 0, tags: [], synced_at: null });
  });

  it("race orders that change nothing of their customer, and are linked to it as stored, without a deadlock or a 5xx", async () => {
    const retried = (reason: string) => retriesCounted(server, reason);
    const before = await retried("deadlock");
    for (let round = 0; round < 4; round++) {
      const phone = newPhone();
      const customer = { external_id: uid("race"), phone, first_name: "Ada" };
      expect((await push("orders", order(phone, { customer }))).status).toBe(201);
      const orders = Array.from({ length: 6 }, () => order(phone, { customer }));
      const answers = await Promise.all([
        ...orders.map((body) => push("orders", body)),
        server.request("DELETE", `/api/v1/stores/${tenant.store.id}/customers/${customer.external_id}`, { key: tenant.key }),
      ]);
      expect(answers.map((answer) => answer.status).filter((status) => status >= 500)).toEqual([]);
      // Each order is linked to a customer of that key: the erased one (stored before the erasure) or one created anew after it.
      const linked = await server.db
        .selectFrom("orders as o")
        .innerJoin("customers as cu", "cu.id", "o.customer_id")
        .select(["cu.external_id", "cu.deleted_at"])
        .where("o.store_id", "=", tenant.store.id)
        .where("o.external_id", "in", orders.map((body) => String(body.external_id)))
        .execute();
      expect(linked).toHaveLength(orders.length);
      for (const row of linked) expect(row.external_id).toBe(customer.external_id);
      const active = await server.db.selectFrom("customers").select("id").where("store_id", "=", tenant.store.id).where("external_id", "=", customer.external_id).where("deleted_at", "is", null).execute();
      expect(active.length).toBeLessThanOrEqual(1);
    }
    expect(await retried("deadlock")).toBe(before);
  });

  // Two connections: a worker's transaction holding the customer's job while the erasure arrives.
  it.runIf(testDb === "postgres")("wait for a worker that holds their contact, in the lock order, never deadlocking or retrying", async () => {
    const id = uid("held");
    await push("customers", { external_id: id, phone: newPhone(), first_name: "Held" });
    await settled();
    const customer = await server.db.selectFrom("customers").select("id").where("external_id", "=", id).executeTakeFirstOrThrow();
    const [job] = await jobsFor("contact_sync", id);
    if (!job) throw new Error("no contact sync job");
    const before = { ...retries };
    const worker = await server.db.startTransaction().execute();
    let erasure: Promise<number> | undefined;
    let erased = false;
    try {
      // As a worker's group runs: its jobs held, then its recipients' contacts, then their customers read.
      await worker.selectFrom("automation_jobs").select("id").where("id", "=", job.id).forNoKeyUpdate().execute();
      await lockRecipientContacts(worker, [{ record_type: "customer", record_id: customer.id }], "key share");
      erasure = server.request("DELETE", `/api/v1/stores/${tenant.store.id}/customers/${id}`, { key: tenant.key }).then((res) => {
        erased = true;
        return res.status;
      });
      // The erasure's statement is waiting for a lock (the contact the worker holds), as PostgreSQL itself says.
      await expect.poll(async () => (await sql<{ waiting: number }>`select count(*)::int as waiting from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`.execute(server.db)).rows[0]?.waiting).toBeGreaterThan(0);
      const [read] = [...(await findCustomersForSync(worker, [customer.id])).values()];
      // The erasure waits for the contact the worker holds: the worker still reads the customer as it was.
      expect(erased).toBe(false);
      expect(read).toMatchObject({ deleted_at: null });
      await worker.commit().execute();
    } catch (error) {
      await worker.rollback().execute();
      throw error;
    }
    expect(await erasure).toBe(204);
    expect(retries).toEqual(before);
    expect(await server.db.selectFrom("customers").select("deleted_at").where("id", "=", customer.id).executeTakeFirstOrThrow()).toMatchObject({ deleted_at: expect.any(Date) });
  });

  // Four connections: a worker's run, a push's transaction and an erasure meeting on two contacts, as a busy store makes them meet.
  it.runIf(testDb === "postgres")("leave a contact sync whose contact a push holds to run alone: a run never waits for a lock after its first", async () => {
    // Contacts A and B, A first in phone order: A's customer is synced and B's gets a post-purchase in one run.
    const [phoneA, phoneB] = [newPhone(), newPhone()].sort() as [string, string];
    const syncedId = uid("synced");
    await push("customers", { external_id: syncedId, phone: phoneA, first_name: "Before" }, tenant, { "X-Backfill": "true" });
    const body = order(phoneB);
    await push("orders", body, tenant, { "X-Backfill": "true" });
    const synced = await server.db.selectFrom("customers").select(["id", "contact_id", "profile_version"]).where("external_id", "=", syncedId).executeTakeFirstOrThrow();
    const ordered = await server.db.selectFrom("orders").select(["id", "customer_id"]).where("store_id", "=", tenant.store.id).where("external_id", "=", body.external_id).executeTakeFirstOrThrow();
    const erasedId = (await server.db.selectFrom("customers").select("external_id").where("id", "=", ordered.customer_id).executeTakeFirstOrThrow()).external_id;
    const job = { id: 0, store_id: tenant.store.id, attempts: 0 };
    const jobs = [
      { ...job, flow: "contact_sync" as const, record_type: "customer" as const, record_id: synced.id, customer_id: synced.id, payload: { profile_version: synced.profile_version } },
      { ...job, flow: "post_purchase" as const, record_type: "order" as const, record_id: ordered.id, customer_id: ordered.customer_id, payload: {} },
    ];
    const before = { ...retries };
    const waiting = async () =>
      Number((await sql<{ n: string }>`select count(*) as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`.execute(server.db)).rows[0]?.n);

    const holder = await server.db.startTransaction().execute();
    const worker = await server.db.startTransaction().execute();
    const pusher = await server.db.startTransaction().execute();
    try {
      // The run is held up between its contacts (A and B, key share) and its customers' read.
      await holder.selectFrom("customers").select("id").where("id", "=", synced.id).forUpdate().execute();
      const run = decideMany(worker, jobs);
      await expect.poll(waiting).toBe(1);
      // A push's statement takes contact A, as every push takes its contacts (a key-share lock never stops it).
      await pusher.updateTable("contacts").set({ synced_at: sql`synced_at` }).where("id", "=", synced.contact_id).execute();
      // The erasure of B's customer waits for the run.
      const erasure = server.request("DELETE", `/api/v1/stores/${tenant.store.id}/customers/${encodeURIComponent(erasedId ?? "")}`, { key: tenant.key });
      await expect.poll(waiting).toBe(2);
      await holder.commit().execute();
      // The run would write A's profile, which the push holds: it leaves that sync to run alone and ends without waiting.
      expect((await run).map(({ job, decision }) => [job.flow, decision.send])).toEqual([["post_purchase", true]]);
      await worker.commit().execute();
      expect((await erasure).status).toBe(204);
      await pusher.commit().execute();
    } catch (error) {
      for (const trx of [holder, worker, pusher]) await trx.rollback().execute().catch(() => undefined);
      throw error;
    }
    expect(retries).toEqual(before);
    expect(await server.db.selectFrom("contacts").select("first_name").where("id", "=", synced.contact_id ?? 0).executeTakeFirstOrThrow()).toEqual({ first_name: null });
  });

  it("a job whose recipient's contact its run does not hold is not decided on that read: left to run alone, or run again", async () => {
    const phone = newPhone();
    const body = order(phone);
    await push("orders", body, tenant, { "X-Backfill": "true" });
    const stored = await server.db.selectFrom("orders").select(["id", "customer_id"]).where("store_id", "=", tenant.store.id).where("external_id", "=", body.external_id).executeTakeFirstOrThrow();
    const due = { id: 0, store_id: tenant.store.id, flow: "post_purchase" as const, record_type: "order" as const, record_id: stored.id, customer_id: stored.customer_id, payload: {}, attempts: 0 };
    await server.db.transaction().execute(async (trx) => {
      // As if the order's customer changed between the run's lock of contacts and its read: the contact it needs is not held.
      expect(await postPurchase.decideMany(trx, [due], new Set())).toEqual([undefined]);
      await expect(postPurchase.decide(trx, { ...due, status: "running" } as never, new Set())).rejects.toBeInstanceOf(LockOrderConflict);
      // Held, it is decided.
      const held = await lockRecipientContacts(trx, [due], "key share");
      expect(await postPurchase.decideMany(trx, [due], held)).toMatchObject([{ send: true, recipient: { phone } }]);
    });
  });

  it.runIf(testDb === "postgres")("while a worker holds one of their jobs: the job is left to it, which finds the customer erased and redacts it", async () => {
    // A phone-keyed customer: its key, in its jobs, is its phone.
    const phone = newPhone();
    await push("customers", { phone, first_name: "Held" }, tenant, { "X-Backfill": "true" });
    const customer = await server.db.selectFrom("customers").select(["id", "profile_version"]).where("external_id", "=", phone).executeTakeFirstOrThrow();
    // Its sync, due in a moment: held by a worker's transaction meanwhile.
    await server.db
      .insertInto("automation_jobs")
      .values({
        store_id: tenant.store.id,
        flow: "contact_sync",
        dedupe_key: uid("held-sync"),
        record_type: "customer",
        record_id: customer.id,
        record_external_id: phone,
        customer_id: customer.id,
        payload: JSON.stringify({ profile_version: customer.profile_version }),
        run_at: sql<Date>`now() + interval '1 second'`,
      })
      .execute();
    const [job] = await jobsFor("contact_sync", phone);
    if (!job) throw new Error("no contact sync job");
    const worker = await server.db.startTransaction().execute();
    try {
      await worker.selectFrom("automation_jobs").select("id").where("id", "=", job.id).forNoKeyUpdate().execute();
      // The erasure never waits for a job: it answers while the job is held.
      expect((await server.request("DELETE", `/api/v1/stores/${tenant.store.id}/customers/${encodeURIComponent(phone)}`, { key: tenant.key })).status).toBe(204);
      expect(await server.db.selectFrom("automation_jobs").select(["status", "record_external_id"]).where("id", "=", job.id).executeTakeFirstOrThrow()).toEqual({
        status: "pending",
        record_external_id: phone,
      });
    } finally {
      await worker.rollback().execute();
    }
    // The worker that runs it finds the erasure: nothing sent, and the job no longer names the phone.
    await expect
      .poll(() => server.db.selectFrom("automation_jobs").select(["status", "last_error", "record_external_id"]).where("id", "=", job.id).executeTakeFirstOrThrow())
      .toEqual({ status: "cancelled", last_error: "the customer was erased", record_external_id: "(erased)" });
    expect(await server.db.selectFrom("messages").select("id").where("job_id", "=", job.id).execute()).toEqual([]);
  });
});

describe("erasure and contacts shared over time", () => {
  it("keeps the profile another customer synced to a phone the erased customer once had", async () => {
    const p1 = newPhone();
    const a = uid("mover");
    await push("customers", { external_id: a, phone: p1, first_name: "Alma" });
    await settled();
    await push("customers", { external_id: a, phone: newPhone(), first_name: "Alma" });
    const b = uid("newcomer");
    await push("customers", { external_id: b, phone: p1, first_name: "Bruno", lifetime_value: 700 });
    await settled();
    expect((await server.request("DELETE", `/api/v1/stores/${tenant.store.id}/customers/${a}`, { key: tenant.key })).status).toBe(204);
    const contact = await server.db.selectFrom("contacts").selectAll().where("store_id", "=", tenant.store.id).where("phone", "=", p1).executeTakeFirstOrThrow();
    expect(contact).toMatchObject({ first_name: "Bruno", lifetime_value: 700 });
  });
});

describe("erasure leaves no personal data", () => {
  /** Every row of every table of the database, as text. */
  async function everyRow(): Promise<Array<{ table: string; row: string }>> {
    const tables = await sql<{ table_name: string }>`
      select table_name from information_schema.tables
      where table_schema = current_schema() and table_type = 'BASE TABLE'`.execute(server.db);
    const rows: Array<{ table: string; row: string }> = [];
    for (const { table_name } of tables.rows) {
      const result = await sql<{ row: string }>`select t::text as row from ${sql.table(table_name)} t`.execute(server.db);
      for (const { row } of result.rows) rows.push({ table: table_name, row });
    }
    return rows;
  }

  it("not in contacts of the customer's earlier phones, messages, job payloads or any other table", async () => {
    const unique = Math.random().toString(36).slice(2, 8);
    const first = newPhone();
    const second = newPhone();
    const id = uid("forget");
    const personal = { first_name: `Quirin${unique}`, last_name: `Zebedee${unique}`, email: `q.${unique}@example.org`, locale: "de-CH", tags: [`tag${unique}`] };
    await push("customers", { external_id: id, phone: first, ...personal, lifetime_value: 4200 });
    await settled();
    // The phone changes: the first phone's contact keeps what was synced to it.
    await push("orders", order(second, { customer: { external_id: id, phone: second, ...personal } }));
    await push("checkouts", checkout(second, { customer: { external_id: id, phone: second } }));
    await settled();
    const beforeErasure = (await everyRow()).filter(({ row }) => row.includes(personal.email));
    expect(beforeErasure.map(({ table }) => table)).toContain("contacts");

    expect((await server.request("DELETE", `/api/v1/stores/${tenant.store.id}/customers/${id}`, { key: tenant.key })).status).toBe(204);

    const needles = [first, second, first.slice(1), second.slice(1), personal.first_name, personal.last_name, personal.email, personal.tags[0] ?? ""];
    const leaks = (await everyRow()).filter(({ row }) => needles.some((needle) => row.includes(needle)));
    expect(leaks).toEqual([]);
  });
});
