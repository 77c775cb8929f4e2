import type { Activity, AutomationRun, Message } from "@commerce-ingest/shared";
import type { Db, JobRow, MessageRow } from "../db/types.js";
import { formatOptionalTimestamp, formatTimestamp } from "../time.js";
import { listMessages, listRuns, type ActivityFilter } from "./jobs.repository.js";

function toRun(row: JobRow): AutomationRun {
  return {
    id: row.id,
    flow: row.flow,
    record_type: row.record_type,
    record_external_id: row.record_external_id,
    status: row.status,
    attempts: row.attempts,
    error: row.last_error,
    run_at: formatTimestamp(row.run_at),
    created_at: formatTimestamp(row.created_at),
    finished_at: formatOptionalTimestamp(row.finished_at),
  };
}

function toMessage(row: MessageRow): Message {
  return {
    id: row.id,
    run_id: row.job_id,
    flow: row.flow,
    status: row.status,
    to_phone: row.to_phone,
    content: row.content as Record<string, unknown>,
    provider: row.provider,
    created_at: formatTimestamp(row.created_at),
    sent_at: formatOptionalTimestamp(row.sent_at),
  };
}

/** A store's recent automation runs and messages, newest first. */
export async function storeActivity(db: Db, storeId: number, limit: number, filter: ActivityFilter = {}): Promise<Activity> {
  const [runs, messages] = await Promise.all([listRuns(db, storeId, limit, filter), listMessages(db, storeId, limit, filter)]);
  return { runs: runs.map(toRun), messages: messages.map(toMessage) };
}
