/** What an import's lines hold: one kind of record per file. */
export type ImportKind = "orders" | "customers" | "checkouts" | "shipments";

/** An import's state: `queued` and `running` until it ends `succeeded`, `failed` or `cancelled`. */
export type ImportStatus = "queued" | "running" | "succeeded" | "failed" | "cancelled";

/** An import, as `GET /imports/{import_id}` answers it. */
export interface Import {
  id: number;
  store_id: number;
  kind: ImportKind;
  status: ImportStatus;
  /** Records in the file (its lines that are not blank). */
  lines: number;
  /** Lines merged or refused so far. */
  processed: number;
  created: number;
  /** Lines that updated a record (or were older than it and changed nothing). */
  updated: number;
  /** Lines refused: see `errors()`. */
  failed: number;
  /** Bytes received, as sent. */
  bytes: number;
  records_per_second: number | null;
  /** Why a `failed` import stopped, in words. */
  error: string | null;
  /**
   * Why a `failed` import stopped, as a stable code: `upload_interrupted`, `request_timeout`,
   * `import_too_large`, `import_file_invalid` (its upload ended without its 202; nothing merged) or
   * `merge_failed` (what was merged stays). More may be added.
   */
  error_code: string | null;
  created_at: string;
  received_at: string | null;
  started_at: string | null;
  finished_at: string | null;
}

/** One refused line of an import. */
export interface ImportError {
  /** The line's number in the file, from 1 (blank lines count). */
  line: number;
  external_id: string | null;
  /** What a push of this line alone would have answered. */
  status: number;
  code: string;
  error: string;
  details?: Array<{ path: string; message: string }> | undefined;
}
