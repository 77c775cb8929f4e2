import { describe, expect, it } from "vitest";
import { checkout, newPhone, newStore, order, push, server, settled, withAutomationServer } from "../../test/automations.js";
import { ADMIN_TOKEN } from "../../test/helpers.js";

withAutomationServer();

describe("activity", () => {
  it("lists a store's runs and messages newest first, for the operator only", async () => {
    const t = await newStore({ recovery_delay_seconds: 0 });
    const first = order(newPhone());
    await push("orders", first, t);
    await settled(t.store.id);
    await push("checkouts", checkout(newPhone()), t);
    await settled(t.store.id);
    const res = await server.request("GET", `/admin/v1/stores/${t.store.id}/activity?limit=10`, { key: ADMIN_TOKEN });
    expect(res.status).toBe(200);
    const flows = res.body.runs.map((run: { flow: string }) => run.flow);
    expect(flows[0]).toBe("checkout_recovery");
    expect(flows).toContain("post_purchase");
    const created = res.body.runs.map((run: { created_at: string }) => run.created_at);
    expect([...created].sort().reverse()).toEqual(created);
    expect(res.body.messages.length).toBeGreaterThanOrEqual(3);
    expect((await server.request("GET", `/admin/v1/stores/${t.store.id}/activity`, { key: t.key })).status).toBe(401);
    expect((await server.request("GET", `/admin/v1/stores/99999999/activity`, { key: ADMIN_TOKEN })).status).toBe(404);
  });
});
