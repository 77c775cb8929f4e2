// A bridge that receives Shopify-style webhooks and forwards them through the SDK:
//   orders/create, orders/updated     -> orders.upsert
//   checkouts/create, checkouts/update -> checkouts.upsert (completed ones marked completed)
//   fulfillments/create, /update      -> shipments.upsert
//   customers/redact                  -> customers.delete (privacy erasure)
//
// pnpm example shopify-bridge           sends sample webhooks to itself, prints what it did, exits
// pnpm example shopify-bridge --serve   listens on PORT (default 8787) for a shop's webhooks
//
// With SHOPIFY_WEBHOOK_SECRET set, every webhook's X-Shopify-Hmac-Sha256 is verified.
import { createHmac, timingSafeEqual } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { CheckoutInput, OrderInput, ShipmentInput, ShipmentStatus } from "@commerce-ingest/sdk";
import { APIError } from "@commerce-ingest/sdk";
import { connect, main, runId, say, showTriggered } from "./_config.js";

type ShopifyCustomer = { id: number; first_name?: string | null; last_name?: string | null; email?: string | null; phone?: string | null; tags?: string };
type ShopifyOrder = {
  id: number;
  created_at: string;
  total_price: string;
  currency?: string;
  financial_status?: string | null;
  fulfillment_status?: string | null;
  tags?: string;
  phone?: string | null;
  customer?: ShopifyCustomer;
  line_items?: Array<{ sku?: string; title?: string; quantity?: number; price?: string }>;
};
type ShopifyCheckout = {
  token: string;
  created_at: string;
  updated_at?: string;
  completed_at?: string | null;
  abandoned_checkout_url?: string;
  total_price: string;
  currency?: string;
  phone?: string | null;
  customer?: ShopifyCustomer;
};
type ShopifyFulfillment = {
  id: number;
  order_id: number;
  tracking_company?: string | null;
  tracking_number?: string | null;
  tracking_url?: string | null;
  shipment_status?: string | null;
};

const tags = (csv: string | undefined) => (csv ? csv.split(",").map((tag) => tag.trim()).filter(Boolean) : undefined);

function customerOf(customer: ShopifyCustomer | undefined, fallbackPhone: string | null | undefined) {
  const phone = customer?.phone ?? fallbackPhone;
  if (!phone) return undefined; // Messaging needs a phone: without one there is nobody to reach.
  return {
    external_id: customer ? String(customer.id) : undefined,
    phone,
    first_name: customer?.first_name ?? undefined,
    last_name: customer?.last_name ?? undefined,
    email: customer?.email ?? undefined,
    tags: tags(customer?.tags),
  };
}

function toOrder(order: ShopifyOrder): OrderInput | undefined {
  const customer = customerOf(order.customer, order.phone);
  if (!customer) return undefined;
  return {
    external_id: String(order.id),
    placed_at: order.created_at,
    total_price: Number(order.total_price),
    currency: order.currency,
    financial_status: order.financial_status ?? null,
    fulfillment_status: order.fulfillment_status ?? null,
    tags: tags(order.tags) ?? [],
    customer,
    line_items: (order.line_items ?? []).map((item) => ({ sku: item.sku, title: item.title, quantity: item.quantity, price: item.price })),
  };
}

function toCheckout(checkout: ShopifyCheckout): CheckoutInput | undefined {
  const customer = customerOf(checkout.customer, checkout.phone);
  if (!customer) return undefined;
  return {
    external_id: checkout.token,
    abandoned_at: checkout.updated_at ?? checkout.created_at,
    total_price: Number(checkout.total_price),
    currency: checkout.currency,
    recovery_url: checkout.abandoned_checkout_url,
    customer,
  };
}

const SHIPMENT_STATUS: Record<string, ShipmentStatus> = {
  label_printed: "pending",
  label_purchased: "pending",
  confirmed: "pending",
  ready_for_pickup: "pending",
  in_transit: "in_transit",
  out_for_delivery: "in_transit",
  attempted_delivery: "in_transit",
  delivered: "delivered",
  failure: "failed",
};

function toShipment(fulfillment: ShopifyFulfillment): ShipmentInput {
  return {
    external_id: String(fulfillment.id),
    order_external_id: String(fulfillment.order_id),
    carrier: fulfillment.tracking_company ?? null,
    tracking_number: fulfillment.tracking_number ?? null,
    tracking_url: fulfillment.tracking_url ?? null,
    status: fulfillment.shipment_status ? (SHIPMENT_STATUS[fulfillment.shipment_status] ?? null) : "pending",
  };
}

function verifyShopify(raw: string, header: string | undefined, secret: string): boolean {
  if (!header) return false;
  const expected = createHmac("sha256", secret).update(raw, "utf8").digest();
  const given = Buffer.from(header, "base64");
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** Forwards one webhook; returns a line saying what happened. */
async function forward(topic: string, payload: unknown): Promise<string> {
  const { store } = connect();
  switch (topic) {
    case "orders/create":
    case "orders/updated": {
      const order = toOrder(payload as ShopifyOrder);
      if (!order) return `${topic}: skipped, the order has no phone to reach the customer on`;
      const result = await store.orders.upsert(order);
      return `${topic}: order ${order.external_id} ${result.created ? "created" : "updated"}`;
    }
    case "checkouts/create":
    case "checkouts/update": {
      const source = payload as ShopifyCheckout;
      const checkout = toCheckout(source);
      if (!checkout) return `${topic}: skipped, the checkout has no phone`;
      const result = await store.checkouts.upsert(checkout);
      if (source.completed_at) {
        await store.checkouts.update(checkout.external_id, { status: "completed" });
        return `${topic}: checkout ${checkout.external_id} completed (any recovery message cancelled)`;
      }
      return `${topic}: checkout ${checkout.external_id} ${result.created ? "created" : "updated"}, ${result.data.status}`;
    }
    case "fulfillments/create":
    case "fulfillments/update": {
      const shipment = toShipment(payload as ShopifyFulfillment);
      const result = await store.shipments.upsert(shipment);
      return `${topic}: shipment ${shipment.external_id} ${result.created ? "created" : "updated"}, status ${result.data.status ?? "none"}`;
    }
    case "customers/redact": {
      const { customer } = payload as { customer: { id: number } };
      await store.customers.delete(String(customer.id));
      return `${topic}: customer ${customer.id} erased`;
    }
    default:
      return `${topic}: not a topic this bridge forwards; acknowledged`;
  }
}

function startBridge(port: number, secret: string | undefined): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      // Decoded once, whole: a character split across two chunks stays intact for the HMAC.
      const raw = Buffer.concat(chunks).toString("utf8");
      const topic = String(req.headers["x-shopify-topic"] ?? "");
      if (secret && !verifyShopify(raw, req.headers["x-shopify-hmac-sha256"] as string | undefined, secret)) {
        say(`${topic}: refused, the HMAC does not verify`);
        res.writeHead(401).end();
        return;
      }
      let payload: unknown;
      try {
        payload = JSON.parse(raw);
      } catch {
        say(`${topic}: refused, the body is not JSON`);
        res.writeHead(400).end();
        return;
      }
      forward(topic, payload)
        .then((line) => {
          say(line);
          res.writeHead(200).end();
        })
        .catch((error: unknown) => {
          // A 4xx from the API will not get better on retry: acknowledge so Shopify stops resending.
          const permanent = error instanceof APIError && error.status < 500 && error.status !== 429;
          say(`${topic}: ${permanent ? "dropped" : "failed, Shopify will retry"}: ${error instanceof Error ? error.message : String(error)}`);
          res.writeHead(permanent ? 200 : 503).end();
        });
    });
  });
  return new Promise((resolve) => server.listen(port, "127.0.0.1", () => resolve(server)));
}

/** Sample webhooks, shaped as Shopify sends them. */
function samples(id: string): Array<[string, unknown]> {
  const customer = { id: 7000001, first_name: "Ada", last_name: "Lovelace", email: "ada@example.com", phone: "+12025550143", tags: "vip, newsletter" };
  const orderId = Number(`9${Date.now() % 1_000_000_000}`);
  const token = `shopify-checkout-${id}`;
  return [
    ["checkouts/create", { token, created_at: new Date().toISOString(), abandoned_checkout_url: `https://shop.example/checkouts/${token}/recover`, total_price: "49.00", currency: "USD", customer }],
    ["orders/create", { id: orderId, created_at: new Date().toISOString(), total_price: "49.00", currency: "USD", financial_status: "paid", fulfillment_status: null, tags: "web", customer, line_items: [{ sku: "MUG-1", title: "Mug", quantity: 1, price: "49.00" }] }],
    ["checkouts/update", { token, created_at: new Date().toISOString(), completed_at: new Date().toISOString(), total_price: "49.00", currency: "USD", customer }],
    ["fulfillments/create", { id: orderId + 1, order_id: orderId, tracking_company: "USPS", tracking_number: "9400100000000000000000", shipment_status: "label_printed" }],
    ["fulfillments/update", { id: orderId + 1, order_id: orderId, tracking_company: "USPS", tracking_number: "9400100000000000000000", shipment_status: "in_transit" }],
    ["orders/create", { id: orderId + 2, created_at: new Date().toISOString(), total_price: "10.00", currency: "USD", customer: { id: 7000002 } }],
    ["customers/redact", { shop_id: 1, shop_domain: "shop.example", customer: { id: 7000001, email: "ada@example.com", phone: "+12025550143" }, orders_to_redact: [orderId] }],
  ];
}

await main(async () => {
  connect(); // fail early, with advice, when the service is not configured
  if (process.argv.includes("--serve")) {
    const port = Number(process.env.PORT ?? 8787);
    await startBridge(port, process.env.SHOPIFY_WEBHOOK_SECRET);
    say(`Shopify bridge listening on http://127.0.0.1:${port} (point the shop's webhooks here)`);
    return;
  }
  const secret = process.env.SHOPIFY_WEBHOOK_SECRET ?? "demo-shopify-secret";
  const bridge = await startBridge(0, secret);
  const url = `http://127.0.0.1:${(bridge.address() as AddressInfo).port}`;
  say(`Shopify bridge on ${url}; sending sample webhooks to it:`);
  const hooks = samples(runId());
  for (const [topic, payload] of hooks) {
    const body = JSON.stringify(payload);
    const hmac = createHmac("sha256", secret).update(body, "utf8").digest("base64");
    const res = await fetch(url, { method: "POST", body, headers: { "Content-Type": "application/json", "X-Shopify-Topic": topic, "X-Shopify-Hmac-Sha256": hmac } });
    if (!res.ok) throw new Error(`the bridge answered ${res.status} to ${topic}`);
  }
  const forged = await fetch(url, { method: "POST", body: "{}", headers: { "X-Shopify-Topic": "orders/create", "X-Shopify-Hmac-Sha256": "Zm9yZ2Vk" } });
  say(`A forged webhook was answered ${forged.status}`);
  const garbled = "<not json>";
  const garbledHmac = createHmac("sha256", secret).update(garbled, "utf8").digest("base64");
  const notJson = await fetch(url, { method: "POST", body: garbled, headers: { "X-Shopify-Topic": "orders/create", "X-Shopify-Hmac-Sha256": garbledHmac } });
  say(`A signed webhook whose body is not JSON was answered ${notJson.status}`);
  bridge.close();
  const [checkout, order, , fulfillment] = hooks.map(([, payload]) => payload as { id?: number; token?: string });
  await showTriggered([
    ["checkout", checkout?.token ?? ""],
    ["order", String(order?.id)],
    ["shipment", String(fulfillment?.id)],
    ["customer", "7000001"],
  ]);
});
