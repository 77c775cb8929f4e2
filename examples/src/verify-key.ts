// Checks that a key, a store and their authorization are right: a customer upsert
// that succeeds (201 or 200) proves all three, as the API documentation says.
import { AuthenticationError, NotFoundError, PermissionDeniedError } from "@commerce-ingest/sdk";
import { connect, main, say, showTriggered } from "./_config.js";

await main(async () => {
  const { store, storeId, baseUrl } = connect();
  try {
    const result = await store.customers.upsert({ external_id: "onboarding-check", phone: "+12025550143", first_name: "Onboarding" });
    say(`Key verified against ${baseUrl}: store ${storeId} accepts pushes.`);
    say(`  customer ${result.data.external_id} ${result.created ? "created (201)" : "updated (200)"}, request id ${result.requestId}`);
    await showTriggered([["customer", result.data.external_id]]);
  } catch (error) {
    if (error instanceof AuthenticationError) say(`The key is not valid (${error.message}): create one with pnpm admin key create.`);
    if (error instanceof PermissionDeniedError) say(`The key works, but not for store ${storeId} (${error.message}).`);
    if (error instanceof NotFoundError) say(`Store ${storeId} does not exist or is paused (${error.message}).`);
    throw error;
  }
});
