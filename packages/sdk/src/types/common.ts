import type { ErrorCode } from "../codes.js";

/** A code the API answers with, exactly as its error bodies carry it (made from the service's error table at each build). */
export type { ErrorCode };

/** An ISO 8601 date-time with `Z` or a numeric offset, e.g. `"2026-11-20T14:03:00+01:00"`. A time without a zone is refused. */
export type Timestamp = string;

/** A free-form JSON object, at most 16 KB serialised. Replaces the stored metadata when sent. */
export type Metadata = Record<string, unknown>;

/** What one item of a batch came to. */
export interface BatchItemResult<T> {
  /** What a push of this item alone would have answered: 201 created, 200 updated, 422 refused; 500 or 503: not stored, send it again. */
  status: number;
  /** The item's external_id, as sent (`null` when it had none). */
  external_id: string | null;
  /** On 201 and 200: the record, as the single upsert answers it. */
  record?: T | undefined;
  /** Present when the item was older than the stored record (`source_updated_at`) and not applied. */
  stale?: true | undefined;
  /** Fields of the item the API ignored (only when not strict). */
  ignored_fields?: string[] | undefined;
  /** On 422, 500 and 503: the error's message. */
  error?: string | undefined;
  /** On 422, 500 and 503: the error's stable code, as an error body's (`"validation_failed"`). */
  code?: string | undefined;
  /** On 422: one entry per failing field of the item. */
  details?: ErrorDetail[] | undefined;
}

/** A batch's answer, or all the batches of an `upsertMany`. */
export interface BatchResult<T> {
  /** One result per item, in the order sent. */
  results: Array<BatchItemResult<T>>;
  counts: { created: number; updated: number; failed: number };
}

/** One failing field of a 422. */
export interface ErrorDetail {
  /** The field's dotted path, e.g. `"customer.phone"` or `"line_items.3"`. */
  path: string;
  /** What is wrong with it, e.g. `"is not a valid phone number"` or `"unknown field"`. */
  message: string;
}

/** Every error body the API answers with. */
export interface ErrorBody {
  /** The contract's message, e.g. `"Invalid request body"`: for people, it may be reworded. */
  error: string;
  /**
   * The stable code the service sends, e.g. `"validation_failed"` (absent from
   * servers older than codes). `APIError.code` is the same.
   */
  code?: string | undefined;
  /** On a 422: one entry per failing field. */
  details?: ErrorDetail[] | undefined;
}

/** A page of a list: its records in the order they last changed, and where the next page starts. */
export interface Page<T> {
  data: T[];
  /** Send it as `cursor` for the next page; `null`: nothing more has changed, for now. */
  next_cursor: string | null;
}
