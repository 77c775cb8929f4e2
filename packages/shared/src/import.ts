import { z } from "zod";
import { errorDetailSchema } from "./common.js";

/** What an import can carry: one kind of record per file, each line as that kind's upsert body. */
export const IMPORT_KINDS = ["orders", "customers", "checkouts", "shipments"] as const;
export type ImportKind = (typeof IMPORT_KINDS)[number];

export const IMPORT_STATUSES = ["queued", "running", "succeeded", "failed", "cancelled"] as const;
export type ImportStatus = (typeof IMPORT_STATUSES)[number];

/** An import is over once it has one of these statuses. */
export const IMPORT_FINAL_STATUSES: readonly ImportStatus[] = ["succeeded", "failed", "cancelled"];

/** Why an import ended `failed`: the first four are its upload's (nothing of it merged), the last the merge's. */
export const IMPORT_FAILURES = ["upload_interrupted", "request_timeout", "import_too_large", "import_file_invalid", "merge_failed"] as const;
export type ImportFailure = (typeof IMPORT_FAILURES)[number];

const count = (description: string) => z.number().int().min(0).meta({ description });
const time = (description: string) => z.string().nullable().meta({ description, example: "2026-11-26T09:30:00.000Z" });

export const importSchema = z
  .object({
    id: z.number().int().meta({ description: "The import's id.", example: 42 }),
    store_id: z.number().int().meta({ description: "The store it writes to.", example: 1 }),
    kind: z.enum(IMPORT_KINDS).meta({ description: "The kind of record each line holds.", example: "orders" }),
    status: z.enum(IMPORT_STATUSES).meta({
      description:
        "`queued`: received whole, waiting for its turn (a team runs a few imports at once); `running`: being merged; " +
        "`succeeded`: every line merged or listed as failed; `failed`: its upload ended without its `202` (nothing of it is merged), or an error of the service stopped it (what was merged stays): `error_code` says which; " +
        "`cancelled`: stopped on request, what was merged stays.",
      example: "running",
    }),
    lines: count("Records in the file (its lines that are not blank)."),
    processed: count("Lines merged or refused so far."),
    created: count("Lines that created a record."),
    updated: count("Lines that updated a record (or were older than it, by `source_updated_at`, and changed nothing)."),
    failed: count("Lines refused: see `GET .../imports/{id}/errors`."),
    bytes: count("Bytes received, as sent."),
    records_per_second: z.number().nullable().meta({ description: "Lines processed a second since the merge started; `null` before.", example: 52000 }),
    error: z.string().nullable().meta({ description: "Why a `failed` import stopped, in words; otherwise `null`.", example: null }),
    error_code: z
      .string()
      .nullable()
      .meta({
        description:
          "Why a `failed` import stopped, as a stable code (more may be added); otherwise `null`. `upload_interrupted`: the connection or the server receiving it ended before the whole file arrived; " +
          "`request_timeout`: the upload fell silent or was slower than the minimum rate, or took longer than its limit in all; `import_too_large`: the file passed its size limit mid-way; " +
          "`import_file_invalid`: its bytes stopped being readable mid-way (a broken gzip stream); `merge_failed`: the service could not merge a chunk (what was merged stays).",
        example: null,
      }),
    created_at: z.string().meta({ description: "When the upload began.", example: "2026-11-26T09:29:41.000Z" }),
    received_at: time("When the whole file had been received."),
    started_at: time("When its first chunk was merged; `null` while queued."),
    finished_at: time("When it ended; `null` until then."),
  })
  .meta({ id: "Import" });

export type Import = z.infer<typeof importSchema>;

export const importListSchema = z
  .object({ data: z.array(importSchema).meta({ description: "The store's recent imports, newest first." }) })
  .meta({ id: "ImportList" });

/** One refused line, as `GET .../imports/{id}/errors` streams it (NDJSON). */
export const importErrorSchema = z
  .object({
    line: z.number().int().meta({ description: "The line's number in the file, from 1 (blank lines count).", example: 17 }),
    external_id: z.string().nullable().meta({ description: "The line's `external_id`, when it had one.", example: "o-1017" }),
    status: z.number().int().meta({ description: "What a push of this line alone would have answered.", example: 422 }),
    code: z.string().meta({ description: "The error's stable code, as an error body's.", example: "validation_failed" }),
    error: z.string().meta({ description: "The error's message.", example: "Invalid request body" }),
    details: z.array(errorDetailSchema).optional().meta({ description: "One entry per failing field, as a 422 gives." }),
  })
  .meta({ id: "ImportError" });

export type ImportError = z.infer<typeof importErrorSchema>;
