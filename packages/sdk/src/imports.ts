import { storePath, type ApiResult, type RequestOptions, type Transport } from "./transport.js";
import { AbortError, CommerceIngestError } from "./errors.js";
import type { Import, ImportError, ImportKind } from "./types.js";

/** Records to import: an array, any iterable or async iterable (a generator, a database cursor), or a Node readable stream in object mode. */
export type ImportRecords = Iterable<unknown> | AsyncIterable<unknown>;

export type ImportCreateParams = {
  kind: ImportKind;
  /** The records, each as that kind's upsert takes it; read as the upload goes, never held whole. */
  records?: ImportRecords | undefined;
  /** Or a file's bytes as they are: NDJSON, gzipped when `gzipped`. */
  file?: ReadableStream<Uint8Array> | AsyncIterable<Uint8Array> | undefined;
  /** `file` is already gzipped (sent as is, with `Content-Encoding: gzip`). */
  gzipped?: boolean | undefined;
  /** Called as the file goes, with the bytes sent so far (before compression, for records). */
  onUpload?: ((progress: { bytes: number; records: number }) => void) | undefined;
};

export type ImportWaitOptions = {
  /** Called after each poll with the import as it stands. */
  onProgress?: ((progress: Import) => void) | undefined;
  /** How often to ask, in ms (default 1,000). */
  intervalMs?: number | undefined;
  signal?: AbortSignal | undefined;
};

const FINAL = new Set(["succeeded", "failed", "cancelled"]);
const encoder = new TextEncoder();

/** The records as NDJSON bytes, a few hundred records at a time. */
async function* ndjsonOf(records: ImportRecords, sent: { bytes: number; records: number }, onUpload: ImportCreateParams["onUpload"]): AsyncGenerator<Uint8Array> {
  let lines: string[] = [];
  let size = 0;
  const flush = () => {
    const bytes = encoder.encode(lines.join(""));
    sent.bytes += bytes.length;
    sent.records += lines.length;
    lines = [];
    size = 0;
    onUpload?.({ ...sent });
    return bytes;
  };
  for await (const record of records as AsyncIterable<unknown>) {
    const line = `${JSON.stringify(record)}\n`;
    lines.push(line);
    size += line.length;
    if (size >= 256 * 1024) yield flush();
  }
  if (lines.length > 0) yield flush();
}

/** Any async iterable of bytes as a web stream (what `fetch` sends), read only as it is sent. */
function streamOf(source: AsyncIterable<Uint8Array>): ReadableStream<Uint8Array> {
  const iterator = source[Symbol.asyncIterator]();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next: IteratorResult<Uint8Array, unknown> = await iterator.next();
      if (next.done === true) controller.close();
      else controller.enqueue(next.value);
    },
    async cancel() {
      await iterator.return?.();
    },
  });
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(new AbortError("Wait aborted"));
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", abort);
      resolve();
    }, ms);
    const abort = () => {
      clearTimeout(timer);
      reject(new AbortError("Wait aborted"));
    };
    signal?.addEventListener("abort", abort, { once: true });
  });

/** One import: what its upload answered, and how to follow it. */
export class ImportHandle {
  readonly id: number;
  readonly storeId: number;
  /** The import as last seen. */
  data: Import;
  readonly #imports: Imports;

  constructor(imports: Imports, data: Import) {
    this.#imports = imports;
    this.data = data;
    this.id = data.id;
    this.storeId = data.store_id;
  }

  /** The import as it stands now. */
  async retrieve(options?: RequestOptions): Promise<Import> {
    this.data = (await this.#imports.retrieve(this.storeId, this.id, options)).data;
    return this.data;
  }

  /** Polls until the import has ended (`succeeded`, `failed` or `cancelled`); answers it then. */
  async wait(options: ImportWaitOptions = {}): Promise<Import> {
    for (;;) {
      const current = await this.retrieve(options.signal ? { signal: options.signal } : undefined);
      options.onProgress?.(current);
      if (FINAL.has(current.status)) return current;
      await sleep(options.intervalMs ?? 1000, options.signal);
    }
  }

  /** Its refused lines, in file order, read as they are iterated. */
  errors(options?: RequestOptions): AsyncGenerator<ImportError> {
    return this.#imports.errors(this.storeId, this.id, options);
  }

  /** Stops it; what was merged stays. @throws ConflictError (`import_finished`) when it had ended */
  async cancel(options?: RequestOptions): Promise<Import> {
    this.data = (await this.#imports.cancel(this.storeId, this.id, options)).data;
    return this.data;
  }
}

/**
 * Bulk imports: a shop's history as one NDJSON file, streamed and gzipped on
 * the way, stored as backfill (no automation fires), merged by the service
 * in file order.
 */
export class Imports {
  readonly #client: Transport;

  constructor(client: Transport) {
    this.#client = client;
  }

  /**
   * Uploads the records (or a file) and answers once the service holds the
   * whole file (202): the import then runs on its own. The upload is sent
   * once, never retried: on a network error, start it again.
   */
  async create(storeId: number, params: ImportCreateParams, options?: RequestOptions): Promise<ImportHandle> {
    const sent = { bytes: 0, records: 0 };
    let body: ReadableStream<Uint8Array>;
    let gzipped: boolean;
    if (params.records) {
      const lines = streamOf(ndjsonOf(params.records, sent, params.onUpload));
      // Gzipped where the runtime can (Node, browsers, most edge runtimes); sent as it is where it cannot.
      gzipped = typeof CompressionStream === "function";
      body = gzipped ? lines.pipeThrough(new CompressionStream("gzip")) : lines;
    } else if (params.file) {
      body = params.file instanceof ReadableStream ? params.file : streamOf(params.file);
      gzipped = params.gzipped ?? false;
    } else {
      throw new CommerceIngestError("imports.create needs `records` or `file`");
    }
    const response = await this.#client.send(
      "POST",
      `${storePath(storeId)}/imports?kind=${encodeURIComponent(params.kind)}`,
      { body, headers: { "Content-Type": "application/x-ndjson", Accept: "application/json", ...(gzipped ? { "Content-Encoding": "gzip" } : {}) } },
      options,
    );
    return new ImportHandle(this, (await response.json()) as Import);
  }

  /** The import's status and counts. @throws NotFoundError (`import_not_found`) */
  retrieve(storeId: number, importId: number, options?: RequestOptions): Promise<ApiResult<Import>> {
    return this.#client.request("GET", `${storePath(storeId)}/imports/${importId}`, undefined, options);
  }

  /** The store's recent imports, newest first. */
  list(storeId: number, options?: RequestOptions): Promise<ApiResult<{ data: Import[] }>> {
    return this.#client.request("GET", `${storePath(storeId)}/imports`, undefined, options);
  }

  /** Stops an import; what was merged stays. */
  cancel(storeId: number, importId: number, options?: RequestOptions): Promise<ApiResult<Import>> {
    return this.#client.request("DELETE", `${storePath(storeId)}/imports/${importId}`, undefined, options);
  }

  /** The import's refused lines, in file order, streamed. */
  async *errors(storeId: number, importId: number, options?: RequestOptions): AsyncGenerator<ImportError> {
    const response = await this.#client.send("GET", `${storePath(storeId)}/imports/${importId}/errors`, { headers: { Accept: "application/x-ndjson" } }, options);
    if (!response.body) return;
    const decoder = new TextDecoder();
    let rest = "";
    for await (const bytes of response.body as unknown as AsyncIterable<Uint8Array>) {
      rest += decoder.decode(bytes, { stream: true });
      const lines = rest.split("\n");
      rest = lines.pop() ?? "";
      for (const line of lines) if (line.trim()) yield JSON.parse(line) as ImportError;
    }
    if (rest.trim()) yield JSON.parse(rest) as ImportError;
  }
}
