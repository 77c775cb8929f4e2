/** What the resources need of the client: a call answered as JSON, or the raw response of a streamed one. */
export interface Transport {
  request<T>(method: string, path: string, body: unknown, options?: RequestOptions): Promise<ApiResult<T>>;
  send(method: string, path: string, init: { body?: ReadableStream<Uint8Array>; headers?: Record<string, string> }, options?: RequestOptions): Promise<Response>;
}

export type RequestOptions = {
  /** Aborts the call (no retry follows). */
  signal?: AbortSignal | undefined;
  timeout?: number | undefined;
  maxRetries?: number | undefined;
  headers?: Record<string, string> | undefined;
  /** Sent as `X-Request-Id` (printable ASCII, at most 128 characters); generated when absent. */
  requestId?: string | undefined;
  /** Historical data: stored, but no automation is triggered (`X-Backfill: true`). */
  backfill?: boolean | undefined;
  /**
   * Sent as `Idempotency-Key` on writes. One is generated per call when absent and reused by its
   * retries, so a retried create answers as the first attempt did. Pass your own to make a
   * write exactly-once across your process restarts too.
   */
  idempotencyKey?: string | undefined;
  /** Overrides the client's `strict` for this call. */
  strict?: boolean | undefined;
};

export type ApiResult<T> = {
  data: T;
  /** The HTTP status of the answer. */
  status: number;
  /** The request's `X-Request-Id`. */
  requestId: string;
  /** The answer's headers (`RateLimit-Remaining`, `X-Stale-Write`, ...). */
  headers: Headers;
  /** Fields of the body the API did not know and ignored (only when not strict), from `X-Ignored-Fields`. */
  ignoredFields: string[];
};

export type UpsertResult<T> = ApiResult<T> & {
  /** True when the upsert created the record (201), false when it updated one (200); right also after a retry. */
  created: boolean;
  /** True when the write was older than the stored record (by `source_updated_at`) and not applied (`X-Stale-Write: ignored`). */
  stale: boolean;
};

/** A store's path, where every resource, batch and import of it lives. */
export const storePath = (storeId: number) => `/api/v1/stores/${encodeURIComponent(String(storeId))}`;
