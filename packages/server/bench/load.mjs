// The load generator, run as a process of its own so it never shares the server's event loop:
// `node load.mjs <scenario JSON>` drives one scenario and prints its figures as JSON: as fast as answered
// with autocannon, or at an offered rate, evenly paced (see `paced`).
import http from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import autocannon from "autocannon";

const { url, key, storeId, kind, connections, seconds, amount, rate, batch = 1, prefix } = JSON.parse(process.argv[2]);
const at = (n) => `/api/v1/stores/${storeId}${n}`;
const phone = (i) => `+1202555${String(1000 + (i % 9000)).slice(-4)}`;
const order = (id, i) => ({
  external_id: id,
  placed_at: "2026-11-22T10:00:00Z",
  total_price: 19.99 + (i % 100),
  currency: "USD",
  customer: { external_id: `${prefix}-c${i % 500}`, phone: phone(i % 500), first_name: "Bench" },
  line_items: [{ sku: "SKU-1", quantity: 1, price: 19.99 }],
  tags: ["bench"],
});

/** Every request's headers but its length. */
const headers = { Authorization: `Bearer ${key}`, "Content-Type": "application/json" };

let n = 0;
/** Each request of a scenario: its method, path and body (a fresh key each time unless the scenario repeats them). */
const next = {
  customer: () => ["POST", at("/customers"), { external_id: `${prefix}-${n}`, phone: phone(n), first_name: "Bench", lifetime_value: n++ }],
  "order-new": () => ["POST", at("/orders"), order(`${prefix}-${n}`, n++)],
  // The same order with a negative total: refused (422) after its key, rate limit, store and body are checked; no record is stored.
  "order-refused": () => ["POST", at("/orders"), { ...order(`${prefix}-${n}`, n++), total_price: -1 }],
  "order-repeat": () => ["POST", at("/orders"), order(`seed-${n % 500}`, n++ % 500)],
  patch: () => ["PATCH", at(`/orders/seed-${n++ % 500}`), { financial_status: n % 2 ? "paid" : "refunded", tags: ["bench", `t${n % 7}`] }],
  shipment: () => ["POST", at("/shipments"), { external_id: `${prefix}-${n}`, order_external_id: `seed-${n % 500}`, status: ["pending", "in_transit", "delivered"][n++ % 3], carrier: "UPS" }],
  batch: () => ["POST", at("/orders/batch"), { items: Array.from({ length: batch }, () => order(`${prefix}-${n}`, n++)) }],
  // A shop-like mix: mostly orders, then customers, checkouts, shipments and status changes.
  mixed: () => {
    const i = n++;
    const pick = i % 20;
    if (pick < 9) return ["POST", at("/orders"), order(`${prefix}-${i}`, i)];
    if (pick < 13) return ["POST", at("/customers"), { external_id: `${prefix}-c${i % 2000}`, phone: phone(i % 2000), first_name: "Mix", orders_count: i % 9 }];
    if (pick < 16) return ["POST", at("/checkouts"), { external_id: `${prefix}-k${i}`, abandoned_at: "2026-11-22T09:00:00Z", total_price: 42, customer: { phone: phone(i % 2000) } }];
    if (pick < 18) return ["POST", at("/shipments"), { external_id: `${prefix}-s${i}`, order_external_id: `seed-${i % 500}`, status: "in_transit" }];
    return ["PATCH", at(`/orders/seed-${i % 500}`), { fulfillment_status: "fulfilled" }];
  },
}[kind];

/**
 * An offered rate, evenly paced (an open loop, as shops' requests arrive): request i is due at
 * start + i / rate and is sent then, whether or not earlier ones have answered (on at most
 * `connections` sockets, kept alive; one that finds them all busy waits for one). Its latency counts
 * from when it was due, so time it spent waiting, here or in the server, is counted, never left out.
 * (autocannon's own rate sends each connection's share of a second at the start of the second, as
 * fast as answered: a burst at full load, then nothing.)
 */
async function paced() {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  const { hostname, port } = new URL(url);
  const total = Math.round(rate * seconds);
  const latencies = [];
  let non2xx = 0;
  let errors = 0;
  let lastAnswer = 0;
  const send = (due) =>
    new Promise((resolve) => {
      const [method, path, body] = next();
      const payload = JSON.stringify(body);
      const request = http.request({ agent, hostname, port, method, path, headers: { ...headers, "Content-Length": Buffer.byteLength(payload) } }, (response) => {
        response.resume();
        response.on("end", () => {
          lastAnswer = performance.now();
          latencies.push(lastAnswer - due);
          if (response.statusCode < 200 || response.statusCode > 299) non2xx++;
          resolve();
        });
      });
      request.on("error", () => {
        errors++;
        resolve();
      });
      request.end(payload);
    });
  const started = performance.now();
  const sent = [];
  for (let i = 0; i < total; i++) {
    const due = started + (i * 1000) / rate;
    const early = due - performance.now();
    // A timer wakes a millisecond late at worst; the latency counts from `due` all the same.
    if (early >= 1) await sleep(early);
    sent.push(send(due));
  }
  await Promise.all(sent);
  agent.destroy();
  latencies.sort((a, b) => a - b);
  // The latency a share q of requests did not exceed (nearest rank), in ms to a tenth.
  const percentile = (q) => Math.round(latencies[Math.max(0, Math.ceil(q * latencies.length) - 1)] * 10) / 10;
  return { requests: latencies.length, rps: latencies.length / ((lastAnswer - started) / 1000), p50: percentile(0.5), p99: percentile(0.99), non2xx, errors };
}

/** As fast as answered: each connection sends its next request when its last one is answered (a closed loop), with autocannon. */
async function asFastAsAnswered() {
  // A run of a fixed number of requests ends, in autocannon's own count, at its next one-second tick: its
  // rate is taken up to the last answer instead (a batch run lasts a few seconds, so a second would be a fifth of it).
  const started = performance.now();
  let lastAnswer = started;
  const instance = autocannon({
    url,
    connections,
    // Batches run a fixed number of requests (one can take seconds); the rest run for a duration.
    ...(amount ? { amount } : { duration: seconds }),
    timeout: 300,
    headers,
    requests: [
      {
        setupRequest: (request) => {
          const [method, path, body] = next();
          return { ...request, method, path, body: JSON.stringify(body) };
        },
      },
    ],
  });
  instance.on("response", () => {
    lastAnswer = performance.now();
  });
  const result = await instance;
  const elapsed = amount ? (lastAnswer - started) / 1000 : result.duration;
  return {
    requests: result.requests.total,
    // Over the whole run: autocannon's per-second average reads 0 for requests slower than a second.
    rps: result.requests.total / elapsed,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
  };
}

process.stdout.write(JSON.stringify(rate ? await paced() : await asFastAsAnswered()));
