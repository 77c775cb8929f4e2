import fs from "node:fs";
import path from "node:path";
import { EdgeVM } from "@edge-runtime/vm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startService } from "./server.js";

/**
 * The built SDK in an edge runtime (Vercel's, as `@edge-runtime/vm` gives it):
 * Web APIs only, no `require`, `process` or `Buffer`. Loading it there fails
 * on any Node.js import; the calls below run inside it, against a running
 * service.
 */
const bundle = fs.readFileSync(path.resolve(import.meta.dirname, "..", "dist", "index.cjs"), "utf8");

describe("the SDK in an edge runtime", () => {
  let service: Awaited<ReturnType<typeof startService>>;

  beforeAll(async () => {
    service = await startService();
  });
  afterAll(() => service?.stop());

  it("loads with no Node.js API, pushes and reads back, and signs and verifies a webhook", async () => {
    const tenant = await service.tenant();
    const vm = new EdgeVM();
    expect(vm.evaluate("typeof require + typeof process + typeof Buffer")).toBe("undefinedundefinedundefined");
    vm.evaluate(`var module = { exports: {} }; (function (module, exports) { ${bundle}\n})(module, module.exports); globalThis.sdk = module.exports;`);
    const outcome = await vm.evaluate<Promise<string>>(`(async () => {
      const client = new sdk.CommerceIngestClient({ apiKey: ${JSON.stringify(tenant.apiKey)}, baseUrl: ${JSON.stringify(service.url)}, logLevel: "off" });
      const pushed = await client.customers.upsert(${tenant.storeId}, { external_id: "edge-1", phone: "+14155552671", first_name: "Edge" });
      const read = await client.customers.retrieve(${tenant.storeId}, "edge-1");
      const missing = await client.orders.retrieve(${tenant.storeId}, "nothing").catch((error) => error);
      const stranger = new sdk.CommerceIngestClient({ apiKey: "x".repeat(24), baseUrl: ${JSON.stringify(service.url)}, logLevel: "off", maxRetries: 0 });
      const refused = await stranger.customers.retrieve(${tenant.storeId}, "edge-1").catch((error) => error);
      const message = { id: "m-edge", store_id: 1, flow: "contact_sync", to: "+14155552671", content: { template: "contact_sync", profile: { phone: "+14155552671", first_name: "Edge", last_name: null, email: null, locale: null, tags: [], lifetime_value: 0, orders_count: 0 } }, created_at: "2026-11-22T09:30:00.000+00:00" };
      const signed = await sdk.signWebhookForTest(message, "whsec_edge_0123456789");
      const verified = await sdk.verifyWebhook(signed.body, signed.headers["X-Signature"], "whsec_edge_0123456789");
      const forged = await sdk.verifyWebhook(signed.body, signed.headers["X-Signature"], "whsec_other_0123456789").catch((error) => error.name);
      const handle = await client.imports.create(${tenant.storeId}, { kind: "customers", records: [{ external_id: "edge-import", phone: "+14155552672" }, { external_id: "edge-bad", phone: "not a phone" }] });
      const imported = await handle.wait({ intervalMs: 50 });
      const importRefused = [];
      for await (const line of handle.errors()) importRefused.push([line.line, line.code]);
      const seen = [];
      for await (const customer of client.customers.list(${tenant.storeId})) seen.push(customer.external_id);
      return JSON.stringify({ created: pushed.created, phone: read.data.phone, missing: [missing.name, missing.code], refused: [refused.name, refused.code], imported: [imported.status, imported.created, imported.failed], importRefused, compression: typeof CompressionStream, verified: verified.id, forged, seen });
    })()`);
    expect(JSON.parse(outcome)).toEqual({
      created: true,
      phone: "+14155552671",
      missing: ["NotFoundError", "order_not_found"],
      refused: ["AuthenticationError", "invalid_api_key"],
      imported: ["succeeded", 1, 1],
      importRefused: [[2, "validation_failed"]],
      compression: expect.any(String),
      verified: "m-edge",
      forged: "WebhookVerificationError",
      seen: ["edge-1", "edge-import"],
    });
  });
});
