// Reference (b), "the database alone running the push's SQL": the service's own order code (the
// statements a push and a batch send, built as the service builds them), called from a loop with
// no HTTP, no body parsing of requests, no worker and no rate limit, on the bench's database and store.
// `tsx push-sql.ts <DATABASE_URL | embedded:<data dir>> <store_id> <seconds> <connections> <prefix>` prints
// `{ singleRps, batchRecordsPerSecond }` as JSON: single order pushes from `connections` loops, then
// batches of 1,000 orders from two loops, as the bench's own scenarios send them. On the embedded
// database (the data directory of a service that has stopped) it measures the single pushes only.
import { orderInputSchema, type OrderInput } from "@commerce-ingest/shared";
import type { StoreContext } from "../src/auth/store-context.js";
import { openDatabase } from "../src/db/index.js";
import { parseBody } from "../src/modules/body.js";
import { upsertOrder, upsertOrders } from "../src/modules/orders/order.service.js";

const [url, storeId, seconds, connections, prefix] = process.argv.slice(2);
if (!url || !storeId || !seconds || !connections || !prefix) throw new Error("usage: push-sql.ts <DATABASE_URL> <store_id> <seconds> <connections> <prefix>");
const store: StoreContext = { id: Number(storeId), teamId: 0, country: "US", recoveryDelaySeconds: 0 };
const options = { backfill: false };

// The same orders as the load generator's (bench/load.mjs): 500 customers, each pushed again and again.
// Bodies are parsed as the service parses them, once per customer, before the clock starts: the reference is the statements alone.
const phone = (i: number) => `+1202555${String(1000 + (i % 9000)).slice(-4)}`;
const parsed = Array.from({ length: 500 }, (_, i) =>
  parseBody(orderInputSchema, [["customer", "phone"]], {
    external_id: "template",
    placed_at: "2026-11-22T10:00:00Z",
    total_price: 19.99,
    currency: "USD",
    customer: { external_id: `${prefix}-c${i}`, phone: phone(i), first_name: "Bench" },
    line_items: [{ sku: "SKU-1", quantity: 1, price: 19.99 }],
    tags: ["bench"],
  }, store.country).value,
);
const order = (id: string, i: number): OrderInput => ({ ...(parsed[i % 500] as OrderInput), external_id: id, total_price: 19.99 + (i % 100) });

const embeddedDir = url.startsWith("embedded:") ? url.slice("embedded:".length) : undefined;
const database = await openDatabase(embeddedDir ? { kind: "embedded", dataDir: embeddedDir } : { kind: "postgres", url, poolSize: Number(connections) + 2 });
try {
  let n = 0;
  let done = 0;
  const singlesStarted = Date.now();
  let end = singlesStarted + Number(seconds) * 1000;
  await Promise.all(
    Array.from({ length: Number(connections) }, async () => {
      while (Date.now() < end) {
        const i = n++;
        await upsertOrder(database.db, store, order(`${prefix}-s${i}`, i), options);
        done++;
      }
    }),
  );
  const singleRps = done / ((Date.now() - singlesStarted) / 1000);

  /** Batches of 1,000 orders from two loops, as the bench's batch scenario sends them: records a second. */
  const batchRate = async () => {
    let b = 0;
    let records = 0;
    const started = Date.now();
    end = started + Number(seconds) * 1000;
    await Promise.all(
      Array.from({ length: 2 }, async () => {
        while (Date.now() < end) {
          const next = b++;
          const batch = Array.from({ length: 1000 }, (_, i) => order(`${prefix}-b${next}-${i}`, next * 1000 + i));
          await upsertOrders(database.db, store, batch, options);
          records += batch.length;
        }
      }),
    );
    return records / ((Date.now() - started) / 1000);
  };
  process.stdout.write(JSON.stringify(embeddedDir ? { singleRps } : { singleRps, batchRecordsPerSecond: await batchRate() }));
} finally {
  await database.close();
}
