// Reference (b), "the database alone running the push's SQL": the service's own order code (the
// statements a push and a batch send, built as the service builds them), called from a loop with
// no HTTP, no body parsing of requests, no worker and no rate limit, on the bench's database and store.
// `tsx push-sql.ts <DATABASE_URL | embedded:<data dir>> <store_id> <seconds> <connections> <prefix> [single|batch]`
// prints, after a line "measuring" and a line "measured" around its measured loops, `{ singleRps,
// batchRecordsPerSecond, cpuMs }` as JSON (cpuMs: its own CPU time over those loops), after a warm-up: single order pushes from `connections` loops, then
// batches of 1,000 orders from two loops, as the bench's own scenarios send them (or only the one named).
// On the embedded database (the data directory of a service that has stopped) it measures the single pushes only.
import { orderInputSchema, type OrderInput } from "@commerce-ingest/shared";
import type { StoreContext } from "../src/tenancy/access.js";
import { openDatabase } from "../src/db/index.js";
import { parseBody } from "../src/records/write-path.js";
import { upsertOrders } from "../src/records/orders/order.service.js";

const [url, storeId, seconds, connections, prefix, only] = process.argv.slice(2);
if (!url || !storeId || !seconds || !connections || !prefix) throw new Error("usage: push-sql.ts <DATABASE_URL | embedded:<data dir>> <store_id> <seconds> <connections> <prefix> [single|batch]");
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
  /** Records a second from `loops` loops, each writing with `write(n)` (n counts up across loops) for `ms`. */
  const rate = async (loops: number, ms: number, write: (n: number) => Promise<number>) => {
    let n = 0;
    let records = 0;
    const started = Date.now();
    const end = started + ms;
    await Promise.all(
      Array.from({ length: loops }, async () => {
        while (Date.now() < end) {
          // Awaited before it is added: `records += await ...` would add to the count read before the wait.
          const written = await write(n++);
          records += written;
        }
      }),
    );
    return records / ((Date.now() - started) / 1000);
  };
  /** A single push, as the bench's scenario sends them from `connections` loops. */
  const single = (tag: string) => async (i: number) => (await upsertOrders(database.db, store, [order(`${prefix}-${tag}${i}`, i)], options), 1);
  /** A batch of 1,000 orders, as the bench's batch scenario sends them from two loops. */
  const batch = (tag: string) => async (b: number) => {
    const orders = Array.from({ length: 1000 }, (_, i) => order(`${prefix}-${tag}${b}-${i}`, b * 1000 + i));
    await upsertOrders(database.db, store, orders, options);
    return orders.length;
  };
  const phase = embeddedDir || only === "single" ? "single" : only === "batch" ? "batch" : "both";
  // Warmed up first (the code compiled, the statements prepared), as the service is before it is measured.
  if (phase !== "batch") await rate(Number(connections), 1000, single("ws"));
  if (phase !== "single") await rate(2, 1000, batch("wb"));
  // The measured loops are framed by two lines, so that the bench can read the database's CPU over them alone.
  process.stdout.write("measuring\n");
  const cpuStart = process.cpuUsage();
  const singleRps = phase === "batch" ? undefined : await rate(Number(connections), Number(seconds) * 1000, single("s"));
  const batchRecordsPerSecond = phase === "single" ? undefined : await rate(2, Number(seconds) * 1000, batch("b"));
  const { user, system } = process.cpuUsage(cpuStart);
  process.stdout.write("measured\n");
  process.stdout.write(JSON.stringify({ singleRps, batchRecordsPerSecond, cpuMs: (user + system) / 1000 }));
  // The connections stay open until the bench has read the database's CPU (it then closes this process's
  // stdin): a backend that ended while it read would take its CPU out of the reading.
  if (!process.stdin.isTTY) await new Promise((resolve) => process.stdin.once("end", resolve).once("close", resolve).resume());
} finally {
  await database.close();
}
