import { APIError, CommerceIngestError } from "./errors.js";
import { BATCH_LIMIT, BATCH_MAX_BYTES } from "./resources.js";
import { storePath } from "./transport.js";
import type { RequestOptions, Transport, UpsertResult } from "./transport.js";
import type { BatchItemResult, BatchResult, Checkout, CheckoutInput, Customer, CustomerInput, Order, OrderInput, Shipment, ShipmentInput } from "./types.js";

/** How a queue gathers pushes into batches, and how many it holds. */
export type QueueOptions = {
  /** Records per batch request, 1 to 1,000 (default 1,000). */
  maxBatch?: number | undefined;
  /** Bytes of JSON per batch request (default 1,000,000, under the service's default body limit). */
  maxBatchBytes?: number | undefined;
  /** How long the first push of a batch waits for others to join it, in ms (default 10). */
  lingerMs?: number | undefined;
  /**
   * Pushes a queue holds at once, waiting or in flight (default 10,000): past it, `push` waits for room,
   * so a producer faster than the service slows to its pace instead of filling memory.
   */
  maxPending?: number | undefined;
  /** Options of every batch request: `backfill`, `strict`, `timeout`, `maxRetries`, `headers`. */
  request?: Omit<RequestOptions, "idempotencyKey" | "requestId" | "signal"> | undefined;
};

/** One resource's pushes through a queue: each answers as `upsert` would, from its batch's result. */
export type QueuedResource<Input, Record> = {
  /** Adds the record to the next batch; answers its own result (created or updated), or throws its own error. */
  push(record: Input): Promise<UpsertResult<Record>>;
};

type Waiting = { item: unknown; bytes: number; resolve: (result: UpsertResult<never>) => void; reject: (error: unknown) => void };
type Lane = { path: string; waiting: Waiting[]; bytes: number; timer: ReturnType<typeof setTimeout> | undefined; sending: boolean };

const encoder = new TextEncoder();
const ENVELOPE = encoder.encode('{"items":[]}').length;

/**
 * Single pushes gathered into batch requests: a producer calls `push` per
 * record as it would call `upsert`, and the queue sends them `maxBatch` (or
 * `maxBatchBytes`) at a time, or after `lingerMs`, one batch at a time per
 * resource so that a key's pushes apply in the order they were made. Each push
 * answers with its own item's result; a batch is retried as any call of the
 * client is (its `Idempotency-Key` kept), and a batch that fails whole fails
 * each of its pushes with that error. `flush()` sends what waits and answers
 * once every push so far is answered; `close()` does so and takes no more.
 */
export class PushQueue {
  readonly orders: QueuedResource<OrderInput, Order>;
  readonly customers: QueuedResource<CustomerInput, Customer>;
  readonly checkouts: QueuedResource<CheckoutInput, Checkout>;
  readonly shipments: QueuedResource<ShipmentInput, Shipment>;

  readonly #client: Transport;
  readonly #maxBatch: number;
  readonly #maxBytes: number;
  readonly #lingerMs: number;
  readonly #maxPending: number;
  readonly #request: RequestOptions;
  readonly #lanes: Lane[] = [];
  #pending = 0;
  #closed = false;
  /** Pushes waiting for room, and flushes waiting for the queue to empty. */
  #roomWaiters: Array<() => void> = [];
  #idleWaiters: Array<() => void> = [];

  constructor(client: Transport, storeId: number, options: QueueOptions = {}) {
    const { maxBatch = BATCH_LIMIT, maxBatchBytes = BATCH_MAX_BYTES, lingerMs = 10, maxPending = 10_000, request = {} } = options;
    if (!Number.isInteger(maxBatch) || maxBatch < 1 || maxBatch > BATCH_LIMIT) throw new CommerceIngestError(`maxBatch must be a whole number from 1 to ${BATCH_LIMIT}`);
    if (!Number.isInteger(maxBatchBytes) || maxBatchBytes < 1) throw new CommerceIngestError("maxBatchBytes must be a whole number of bytes");
    if (!(lingerMs >= 0)) throw new CommerceIngestError("lingerMs must be 0 or more");
    if (!Number.isInteger(maxPending) || maxPending < 1) throw new CommerceIngestError("maxPending must be a whole number, at least 1");
    this.#client = client;
    this.#maxBatch = maxBatch;
    this.#maxBytes = maxBatchBytes;
    this.#lingerMs = lingerMs;
    this.#maxPending = maxPending;
    this.#request = request;
    const base = storePath(storeId);
    this.orders = this.#resource(`${base}/orders`);
    this.customers = this.#resource(`${base}/customers`);
    this.checkouts = this.#resource(`${base}/checkouts`);
    this.shipments = this.#resource(`${base}/shipments`);
  }

  /** Pushes waiting or in flight now. */
  get pending(): number {
    return this.#pending;
  }

  /** Sends every push waiting now; answers once every push made so far is answered. */
  async flush(): Promise<void> {
    for (const lane of this.#lanes) this.#send(lane);
    if (this.#pending === 0) return;
    await new Promise<void>((resolve) => this.#idleWaiters.push(resolve));
  }

  /** Takes no more pushes (they throw), sends what waits, and answers once all is answered. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.flush();
  }

  #resource<Input, Record>(path: string): QueuedResource<Input, Record> {
    const lane: Lane = { path, waiting: [], bytes: 0, timer: undefined, sending: false };
    this.#lanes.push(lane);
    return { push: (record) => this.#push(lane, record) };
  }

  async #push(lane: Lane, item: unknown): Promise<UpsertResult<never>> {
    if (this.#closed) throw new CommerceIngestError("The queue is closed");
    while (this.#pending >= this.#maxPending) await new Promise<void>((resolve) => this.#roomWaiters.push(resolve));
    if (this.#closed) throw new CommerceIngestError("The queue is closed");
    const bytes = encoder.encode(JSON.stringify(item)).length;
    this.#pending++;
    const answer = new Promise<UpsertResult<never>>((resolve, reject) => lane.waiting.push({ item, bytes, resolve, reject }));
    lane.bytes += bytes + 1;
    if (lane.waiting.length >= this.#maxBatch || ENVELOPE + lane.bytes >= this.#maxBytes) this.#send(lane);
    else lane.timer ??= setTimeout(() => this.#send(lane), this.#lingerMs);
    return answer.finally(() => this.#answered());
  }

  #answered(): void {
    this.#pending--;
    this.#roomWaiters.shift()?.();
    if (this.#pending === 0) for (const resolve of this.#idleWaiters.splice(0)) resolve();
  }

  /** Sends the lane's waiting pushes, a batch at a time, until none waits; one batch in flight per lane. */
  #send(lane: Lane): void {
    clearTimeout(lane.timer);
    lane.timer = undefined;
    if (lane.sending || lane.waiting.length === 0) return;
    lane.sending = true;
    void (async () => {
      while (lane.waiting.length > 0) await this.#sendBatch(lane, this.#take(lane));
      lane.sending = false;
    })();
  }

  /** The next batch: up to `maxBatch` pushes and `maxBatchBytes` of JSON (a push larger alone goes alone). */
  #take(lane: Lane): Waiting[] {
    let bytes = ENVELOPE;
    let count = 0;
    for (const waiting of lane.waiting) {
      if (count > 0 && (count >= this.#maxBatch || bytes + 1 + waiting.bytes > this.#maxBytes)) break;
      bytes += waiting.bytes + (count > 0 ? 1 : 0);
      count++;
    }
    const batch = lane.waiting.splice(0, count);
    lane.bytes -= batch.reduce((sum, waiting) => sum + waiting.bytes + 1, 0);
    return batch;
  }

  async #sendBatch(lane: Lane, batch: Waiting[]): Promise<void> {
    try {
      const { data, requestId, headers } = await this.#client.request<BatchResult<never>>("POST", `${lane.path}/batch`, { items: batch.map((waiting) => waiting.item) }, this.#request);
      batch.forEach((waiting, index) => {
        const result = data.results[index];
        if (result) settle(waiting, result, requestId, headers);
        else waiting.reject(new CommerceIngestError("The batch answered fewer results than it carried", { code: "unexpected_response" }));
      });
    } catch (error) {
      for (const waiting of batch) waiting.reject(error);
    }
  }
}

/** A push's own answer from its item's result: its record as `upsert` answers it, or the error it alone would have thrown. */
function settle(waiting: Waiting, result: BatchItemResult<never>, requestId: string, headers: Headers): void {
  if (result.status === 200 || result.status === 201) {
    waiting.resolve({ data: result.record as never, status: result.status, requestId, headers, ignoredFields: result.ignored_fields ?? [], created: result.status === 201, stale: result.stale === true });
    return;
  }
  waiting.reject(APIError.from(result.status, { error: result.error ?? `HTTP ${result.status}`, code: result.code, details: result.details }, headers, requestId));
}
