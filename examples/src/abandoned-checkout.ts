// Pushes an abandoned checkout (which schedules a recovery message after the store's
// delay), then reports the checkout recovered, which cancels that message.
import { connect, main, runId, say, showTriggered } from "./_config.js";

await main(async () => {
  const { store } = connect();
  const token = `example-checkout-${runId()}`;
  const checkout = await store.checkouts.upsert({
    external_id: token,
    abandoned_at: new Date().toISOString(),
    total_price: 59,
    currency: "usd",
    recovery_url: `https://shop.example/checkouts/${token}/recover`,
    customer: { phone: "+12025550143", first_name: "Ada" },
  });
  say(`Checkout ${checkout.data.external_id}: ${checkout.created ? "created" : "updated"}, status ${checkout.data.status}`);
  say(`  a recovery message with ${checkout.data.recovery_url} is scheduled after the store's delay`);

  const repeated = await store.checkouts.upsert({
    external_id: token,
    abandoned_at: new Date().toISOString(),
    total_price: 59,
    customer: { phone: "+12025550143" },
  });
  say(`Pushed again: status still ${repeated.data.status} (one recovery per abandonment)`);

  const recovered = await store.checkouts.update(token, { status: "recovered" });
  say(`The customer came back: status ${recovered.data.status}, the pending recovery message is cancelled`);
  await showTriggered([["checkout", token], ["customer", "+12025550143"]]);
});
