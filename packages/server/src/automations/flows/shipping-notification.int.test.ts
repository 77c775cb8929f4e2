import { describe, expect, it } from "vitest";
import { messagesFor, newPhone, order, push, settled, withAutomationServer } from "../../../test/automations.js";
import { uid } from "../../../test/helpers.js";

withAutomationServer();

describe("shipping notification", () => {
  it("fires on creation and on each new status, never twice for one status", async () => {
    const o = order(newPhone());
    await push("orders", o);
    const shipment = { external_id: uid("ship"), order_external_id: o.external_id, carrier: "DHL", tracking_number: "JD01", status: "in_transit" };
    await push("shipments", shipment);
    await settled();
    let messages = await messagesFor("shipping_notification", shipment.external_id);
    expect(messages).toHaveLength(1);
    expect(messages[0]?.content).toMatchObject({ template: "shipping_notification", shipment: { status: "in_transit", carrier: "DHL", tracking_number: "JD01" }, order: { external_id: o.external_id } });

    await push("shipments", shipment);
    await push("shipments", { ...shipment, tracking_url: "https://track.example/JD01" });
    await settled();
    expect(await messagesFor("shipping_notification", shipment.external_id)).toHaveLength(1);

    await push("shipments", { ...shipment, status: "delivered" });
    await settled();
    messages = await messagesFor("shipping_notification", shipment.external_id);
    expect(messages).toHaveLength(2);
    expect(messages.map((m) => (m.content as { shipment: { status: string } }).shipment.status).sort()).toEqual(["delivered", "in_transit"]);
  });
});
