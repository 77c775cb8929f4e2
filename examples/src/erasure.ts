// Handles a privacy-law erasure request: the customer's personal data is cleared and
// nothing more is sent to them. Erasing again, or erasing someone unknown, also succeeds.
import { connect, main, runId, say, showTriggered } from "./_config.js";

await main(async () => {
  const { store } = connect();
  const customerId = `example-erase-${runId()}`;
  const customer = await store.customers.upsert({ external_id: customerId, phone: "+12025550199", first_name: "Grace", email: "grace@example.com" });
  say(`Customer ${customer.data.external_id} ${customer.created ? "created" : "updated"}`);

  const erased = await store.customers.delete(customerId);
  say(`Erased: ${erased.status} (request id ${erased.requestId})`);
  say(`Erased again: ${(await store.customers.delete(customerId)).status}; unknown customer: ${(await store.customers.delete("nobody-ever")).status}`);

  const phoneKeyed = await store.customers.upsert({ phone: "+12025550188", first_name: "Phone-keyed" });
  say(`A customer pushed without external_id is keyed by its phone: ${phoneKeyed.data.external_id}`);
  say(`Erased by that phone: ${(await store.customers.delete(phoneKeyed.data.external_id)).status}`);

  const again = await store.customers.upsert({ external_id: customerId, phone: "+12025550199" });
  say(`Pushed again later: ${again.created ? "created anew" : "updated"}, first name ${String(again.data.first_name)}`);
  await showTriggered([["customer", customerId]]);
});
