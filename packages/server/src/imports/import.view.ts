import type { Import } from "@commerce-ingest/shared";
import { formatOptionalTimestamp, formatTimestamp } from "../db/sql.js";
import type { ImportRow } from "./import.repository.js";

/** An import as the API and the console show it: its counts, and its pace since it started. */
export function toImport(row: ImportRow, at: Date = new Date()): Import {
  const processed = row.created + row.updated + row.failed;
  const seconds = row.started_at ? ((row.finished_at ?? at).getTime() - row.started_at.getTime()) / 1000 : 0;
  return {
    id: row.id,
    store_id: row.store_id,
    kind: row.kind,
    status: row.status as Import["status"],
    lines: row.lines,
    processed,
    created: row.created,
    updated: row.updated,
    failed: row.failed,
    bytes: row.bytes,
    records_per_second: row.started_at && seconds > 0 ? Math.round(processed / seconds) : null,
    error: row.error,
    error_code: row.error_code,
    created_at: formatTimestamp(row.created_at),
    received_at: formatOptionalTimestamp(row.received_at),
    started_at: formatOptionalTimestamp(row.started_at),
    finished_at: formatOptionalTimestamp(row.finished_at),
  };
}

