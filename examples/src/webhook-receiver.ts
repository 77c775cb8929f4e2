// A messaging-webhook receiver: verifies each delivery's signature on the raw body,
// drops repeats by message id, and handles each flow with its content typed.
// Run with --serve to keep it listening (set MESSAGING_WEBHOOK_URL on the service to
// http://127.0.0.1:8788 and MESSAGING_WEBHOOK_SECRET to the same secret); without it,
// it sends itself signed test messages (signWebhookForTest) and a forged one.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { signWebhookForTest, verifyWebhook, WebhookVerificationError, type WebhookMessage } from "@commerce-ingest/sdk";
import { main, say } from "./_config.js";

const secret = process.env.MESSAGING_WEBHOOK_SECRET ?? "demo-messaging-secret-0123456789";
/** Ids already handled: a real receiver keeps them in its database. */
const handled = new Set<string>();

/** One line per message; `content` is typed by `flow`. */
function describe(message: WebhookMessage): string {
  switch (message.flow) {
    case "post_purchase":
      return `thank ${message.content.first_name ?? "the customer"} for order ${message.content.order.external_id} (${message.content.order.total_price} ${message.content.order.currency ?? ""})`;
    case "checkout_recovery":
      return `remind ${message.to ?? "?"} of checkout ${message.content.checkout.external_id}: ${message.content.checkout.recovery_url ?? "no link"}`;
    case "contact_sync":
      return `sync contact ${message.content.profile.phone ?? "?"} (${message.content.profile.orders_count} orders, tags ${message.content.profile.tags.join(", ") || "none"})`;
    case "shipping_notification":
      return `tell ${message.to ?? "?"} that shipment ${message.content.shipment.external_id} is ${message.content.shipment.status ?? "unknown"}`;
  }
}

function startReceiver(port: number): Promise<http.Server> {
  /** Answers one delivery: 200 once handled (or a repeat), 400 for a bad signature. */
  async function receive(raw: Buffer, signature: string | undefined): Promise<number> {
    try {
      // The raw bytes, before any JSON parsing: the signature covers them.
      const message = await verifyWebhook(raw, signature, secret);
      if (handled.has(message.id)) say(`  ${message.id}: a repeat, dropped`);
      else say(`  ${message.flow}: ${describe(message)}`);
      handled.add(message.id);
      return 200;
    } catch (error) {
      if (!(error instanceof WebhookVerificationError)) throw error;
      say(`  refused: ${error.message}`);
      return 400;
    }
  }
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      receive(Buffer.concat(chunks), req.headers["x-signature"] as string | undefined).then(
        (status) => res.writeHead(status).end(),
        (error: unknown) => {
          console.error(error);
          res.writeHead(500).end();
        },
      );
    });
  });
  return new Promise((resolve) => server.listen(port, "127.0.0.1", () => resolve(server)));
}

await main(async () => {
  if (process.argv.includes("--serve")) {
    const port = Number(process.env.PORT ?? 8788);
    await startReceiver(port);
    say(`Webhook receiver listening on http://127.0.0.1:${port}`);
    return;
  }
  const server = await startReceiver(0);
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  say(`Webhook receiver on ${url}; sending it signed test messages:`);
  const created_at = new Date().toISOString();
  const messages: WebhookMessage[] = [
    {
      id: "msg-1",
      store_id: 1,
      flow: "post_purchase",
      to: "+12025550143",
      content: { template: "post_purchase", first_name: "Ada", order: { external_id: "1001", total_price: "129.90", currency: "USD", placed_at: created_at } },
      created_at,
    },
    {
      id: "msg-2",
      store_id: 1,
      flow: "shipping_notification",
      to: "+12025550143",
      content: {
        template: "shipping_notification",
        first_name: "Ada",
        order: { external_id: "1001" },
        shipment: { external_id: "s-1", status: "in_transit", carrier: "UPS", tracking_number: "1Z999", tracking_url: "https://track.example/1Z999" },
      },
      created_at,
    },
  ];
  for (const message of [...messages, messages[0] as WebhookMessage]) {
    const { body, headers } = await signWebhookForTest(message, secret);
    const response = await fetch(url, { method: "POST", body, headers });
    if (!response.ok) throw new Error(`the receiver answered ${response.status}`);
  }
  const forged = await signWebhookForTest(messages[0] as WebhookMessage, "not-the-secret");
  const refused = await fetch(url, { method: "POST", body: forged.body, headers: forged.headers });
  say(`A message signed with another secret was answered ${refused.status}`);
  server.close();
});
