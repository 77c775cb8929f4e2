// Pushes an order, then its shipment through its statuses. Each new status sends one
// shipping notification; repeating a status sends nothing. A status that changes again
// before its notification goes is superseded (the customer hears only the latest), so
// the example lets the worker run between statuses, as hours between a parcel's scans would.
import type { ShipmentStatus } from "@commerce-ingest/sdk";
import { connect, main, runId, say, showTriggered, waitForAutomations } from "./_config.js";

await main(async () => {
  const { store } = connect();
  const id = runId();
  const order = await store.orders.upsert({
    external_id: `example-shipped-order-${id}`,
    placed_at: new Date().toISOString(),
    total_price: 35,
    customer: { phone: "+12025550143", first_name: "Ada" },
  });
  say(`Order ${order.data.external_id} ${order.created ? "created" : "updated"}`);

  const steps: ShipmentStatus[] = ["pending", "in_transit", "in_transit", "delivered"];
  for (const status of steps) {
    const shipment = await store.shipments.upsert({
      external_id: `example-shipment-${id}`,
      order_external_id: order.data.external_id,
      carrier: "UPS",
      tracking_number: `1Z${id.toUpperCase()}`,
      tracking_url: `https://track.example/1Z${id.toUpperCase()}`,
      status,
    });
    say(`Shipment ${shipment.data.external_id} (order id ${shipment.data.order_id}): ${shipment.created ? "created" : "updated"}, status ${shipment.data.status}`);
    await waitForAutomations([["shipment", shipment.data.external_id]]);
  }
  say("Notifications: one each for pending, in_transit and delivered; the repeated in_transit sent nothing");
  await showTriggered([["order", order.data.external_id], ["shipment", `example-shipment-${id}`]]);
});
