import type { Activity, AutomationRun, Message } from "@commerce-ingest/shared";
import type { Db } from "../db/types.js";
import { formatOptionalTimestamp, formatTimestamp } from "../db/sql.js";
import { listMessages, listRuns, type ActivityFilter } from "./jobs.repository.js";

type Run = Awaited<ReturnType<typeof listRuns>>[number];
type Sent = Awaited<ReturnType<typeof listMessages>>[number];

/** A run as the API shows it: the repository selects its fields by their API names; times as ISO text. */
const toRun = (run: Run): AutomationRun => ({ ...run, run_at: formatTimestamp(run.run_at), created_at: formatTimestamp(run.created_at), finished_at: formatOptionalTimestamp(run.finished_at) });

/** A message as the API shows it (see `toRun`); its content is the JSON object the provider was given. */
const toMessage = (message: Sent): Message => ({
  ...message,
  content: message.content as Record<string, unknown>,
  created_at: formatTimestamp(message.created_at),
  sent_at: formatOptionalTimestamp(message.sent_at),
});

/** A store's recent automation runs and messages, newest first. */
export async function storeActivity(db: Db, storeId: number, limit: number, filter: ActivityFilter = {}): Promise<Activity> {
  const [runs, messages] = await Promise.all([listRuns(db, storeId, limit, filter), listMessages(db, storeId, limit, filter)]);
  return { runs: runs.map(toRun), messages: messages.map(toMessage) };
}
