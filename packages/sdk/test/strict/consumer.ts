// A consumer under the strictest settings (`exactOptionalPropertyTypes`, `noUncheckedIndexedAccess`),
// against the built package's declarations: every public method and option, with values that may be
// undefined where a caller's own types would have them so. Compiled by strict.test.ts, never run.
import {
  APIError,
  CommerceIngestClient,
  ERROR_CODES,
  signWebhookForTest,
  verifyWebhook,
  type AnyErrorCode,
  type BatchOptions,
  type ClientOptions,
  type ErrorCode,
  type ImportCreateParams,
  type ImportWaitOptions,
  type ListParams,
  type RequestOptions,
  type VerifyOptions,
} from "../../dist/index.js";

declare const maybe: { text: string | undefined; count: number | undefined; flag: boolean | undefined; signal: AbortSignal | undefined };

export async function everything(): Promise<void> {
  const options: ClientOptions = {
    apiKey: maybe.text,
    baseUrl: maybe.text,
    timeout: maybe.count,
    maxRetries: maybe.count,
    fetch: undefined,
    defaultHeaders: undefined,
    strict: maybe.flag,
    logLevel: undefined,
    logger: undefined,
    onRetry: undefined,
  };
  const client = new CommerceIngestClient(options);
  const request: RequestOptions = { signal: maybe.signal, timeout: maybe.count, idempotencyKey: maybe.text, backfill: maybe.flag, requestId: maybe.text };
  const batch: BatchOptions = { ...request, batchSize: maybe.count, maxBatchBytes: maybe.count, onProgress: undefined };
  const list: ListParams = { limit: maybe.count, updatedAfter: maybe.text, cursor: maybe.text };

  const order = { external_id: "1001", placed_at: "2026-11-20T14:03:00Z", total_price: 12, customer: { phone: "+14155552671" } };
  await client.orders.upsert(1, order, request);
  await client.orders.upsertMany(1, [order], batch);
  await client.orders.update(1, "1001", { financial_status: "paid" }, request);
  await client.orders.retrieve(1, "1001", request);
  await client.orders.listPage(1, list, request);
  for await (const each of client.orders.list(1, list, request)) void each.external_id;
  await client.customers.upsert(1, { phone: "+14155552671", first_name: maybe.text ?? null }, request);
  await client.customers.upsertMany(1, [{ phone: "+14155552671" }], batch);
  await client.customers.retrieve(1, "c-1", request);
  await client.customers.delete(1, "c-1", request);
  await client.customers.listPage(1, list, request);
  await client.checkouts.upsert(1, { external_id: "k", abandoned_at: "2026-11-20T14:03:00Z", total_price: 1, customer: { phone: "+14155552671" } }, request);
  await client.checkouts.update(1, "k", { status: "recovered" }, request);
  await client.checkouts.retrieve(1, "k", request);
  await client.shipments.upsert(1, { external_id: "s", order_external_id: "1001", status: "in_transit" }, request);
  await client.shipments.retrieve(1, "s", request);

  const create: ImportCreateParams = { kind: "orders", records: [order], gzipped: maybe.flag, onUpload: undefined };
  const handle = await client.imports.create(1, create, request);
  const wait: ImportWaitOptions = { intervalMs: maybe.count, signal: maybe.signal, onProgress: undefined };
  const done = await handle.wait(wait);
  const code: string | null = done.error_code;
  void code;
  for await (const refused of handle.errors(request)) void refused.line;
  await client.imports.retrieve(1, handle.id, request);
  await client.imports.list(1, request);
  await client.imports.cancel(1, handle.id, request);

  const scoped = client.store(1);
  await scoped.orders.retrieve("1001", request);

  const verify: VerifyOptions = { toleranceSeconds: maybe.count, now: maybe.count };
  const signed = await signWebhookForTest(JSON.stringify({ id: "m" }), "whsec_0123456789abcdef");
  await verifyWebhook(signed.body, signed.headers["X-Signature"], "whsec_0123456789abcdef", verify);

  try {
    await client.orders.retrieve(1, "nothing");
  } catch (error) {
    if (error instanceof APIError) {
      const wire: AnyErrorCode = error.code;
      const known: ErrorCode | undefined = error.code in ERROR_CODES ? (error.code as ErrorCode) : undefined;
      void [wire, known, ERROR_CODES.order_not_found.status, error.details[0]?.path];
    }
  }
}
