import { describe, expect, it } from "vitest";
import { messagesFor, newPhone, order, push, server, settled, tenant, withAutomationServer } from "../../../test/automations.js";
import { uid } from "../../../test/helpers.js";

withAutomationServer();

describe("contact sync", () => {
  it("syncs a new customer's profile to its contact, once per change", async () => {
    const phone = newPhone();
    const id = uid("sync");
    // Tags with what array and JSON literals escape: they reach the contact as sent.
    const tags = ["vip", 'say "hi", {ok} \\ ü'];
    const body = { external_id: id, phone, first_name: "Grace", tags, lifetime_value: 900, orders_count: 3 };
    await push("customers", body);
    await settled();
    let messages = await messagesFor("contact_sync", id);
    expect(messages).toHaveLength(1);
    expect(messages[0]?.content).toMatchObject({ template: "contact_sync", profile: { phone, first_name: "Grace", tags, lifetime_value: 900, orders_count: 3 } });
    const contact = await server.db.selectFrom("contacts").selectAll().where("store_id", "=", tenant.store.id).where("phone", "=", phone).executeTakeFirstOrThrow();
    expect(contact).toMatchObject({ first_name: "Grace", tags, lifetime_value: 900, orders_count: 3 });
    expect(contact.synced_at).toBeInstanceOf(Date);

    await push("customers", body);
    await push("customers", { external_id: id, phone });
    await settled();
    expect(await messagesFor("contact_sync", id)).toHaveLength(1);

    await push("customers", { ...body, lifetime_value: 1500 });
    await settled();
    messages = await messagesFor("contact_sync", id);
    expect(messages).toHaveLength(2);
    const synced = await server.db.selectFrom("contacts").select("lifetime_value").where("id", "=", contact.id).executeTakeFirstOrThrow();
    expect(synced.lifetime_value).toBe(1500);
  });

  it("syncs the customer embedded in an order", async () => {
    const id = uid("embedded");
    await push("orders", order(newPhone(), { customer: { external_id: id, phone: newPhone(), lifetime_value: 10, orders_count: 1 } }));
    await settled();
    expect(await messagesFor("contact_sync", id)).toHaveLength(1);
  });
});
