// Pushes an order with its customer, pushes it again, then marks it paid.
import { connect, main, runId, say, showTriggered } from "./_config.js";

await main(async () => {
  const { store } = connect();
  const orderId = `example-order-${runId()}`;
  const order = {
    external_id: orderId,
    placed_at: new Date().toISOString(),
    total_price: 129.9,
    currency: "usd",
    financial_status: "pending",
    customer: { external_id: "example-customer-1", phone: "(202) 555-0143", first_name: "Ada", email: "ada@example.com", lifetime_value: 12990, orders_count: 1 },
    line_items: [{ sku: "TEE-BLK-M", title: "T-shirt", quantity: 2, price: 64.95 }],
    tags: ["first-order"],
  };

  const first = await store.orders.upsert(order);
  say(`Order ${first.data.external_id}: ${first.created ? "created" : "updated"}, total ${first.data.total_price} ${first.data.currency}`);
  say("  a post-purchase message is on its way to the customer's messaging contact");

  const again = await store.orders.upsert(order);
  say(`Pushed again: ${again.created ? "created" : "updated"} (an upsert never duplicates; post-purchase fires once)`);

  const paid = await store.orders.update(orderId, { financial_status: "paid", tags: ["first-order", "paid"] });
  say(`Marked ${paid.data.financial_status}, tags ${paid.data.tags.join(", ")}, created_at still ${paid.data.created_at}`);
  await showTriggered([["order", orderId], ["customer", "example-customer-1"]]);
});
