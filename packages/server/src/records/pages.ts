import type { Page } from "@commerce-ingest/shared";
import { changedAfter, changeHorizon, type ChangeTable, type PagePosition, type PageWindow } from "../db/pages.js";
import type { Db } from "../db/types.js";
import { AppError } from "../errors.js";

/** A list's query, as its schema parsed it. */
export type PageRequest = { updated_after?: string | undefined; limit?: number | undefined; cursor?: string | undefined };

const DEFAULT_LIMIT = 100;
const CHANGE_TIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{6}$/;

/** A cursor: where the page before ended (its last row's change time and id), opaque to callers. */
const encodeCursor = (at: string, id: number) => Buffer.from(JSON.stringify([at, id])).toString("base64url");

function decodeCursor(cursor: string): PagePosition {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
    if (Array.isArray(value) && typeof value[0] === "string" && CHANGE_TIME.test(value[0]) && Number.isSafeInteger(value[1]) && Number(value[1]) >= 0) {
      return { at: value[0], id: Number(value[1]) };
    }
  } catch {
    // Refused below, as any other text that is not a cursor of ours.
  }
  throw new AppError("VALIDATION_FAILED", [{ path: "cursor", message: "is not a cursor this API gave: send `next_cursor` as received" }]);
}

/** The window of the page a request asks for, up to the change horizon read now (see `changeHorizon`). */
async function pageWindow(db: Db, request: PageRequest): Promise<PageWindow> {
  const after = request.cursor === undefined ? undefined : decodeCursor(request.cursor);
  return { horizon: await changeHorizon(db), after, updatedAfter: request.updated_after, limit: request.limit ?? DEFAULT_LIMIT };
}

/**
 * A page of a store's records: read up to the change horizon (see
 * `changeHorizon`), one more than the limit (the extra row says there is a
 * next page). A page that ended at the horizon while writes under way hold
 * back rows after it still gives a cursor, so the caller goes on from there
 * (an empty page, when nothing before the horizon was left); `next_cursor`
 * is null only when nothing at all changed after the page.
 */
export async function listPage<Row extends { change_at: string; id: number }, Record>(
  db: Db,
  table: ChangeTable,
  storeId: number,
  request: PageRequest,
  read: (window: PageWindow) => Promise<readonly Row[]>,
  toRecord: (row: NoInfer<Row>) => Record,
): Promise<Page<Record>> {
  const window = await pageWindow(db, request);
  const rows = await read(window);
  const page = rows.slice(0, window.limit);
  const last = page.at(-1);
  const position = last ? { at: last.change_at, id: Number(last.id) } : (window.after ?? startOf(window));
  const more = rows.length > window.limit || (await changedAfter(db, table, storeId, window, position));
  return { data: page.map(toRecord), next_cursor: more ? encodeCursor(position.at, position.id) : null };
}

/** Where a list starts: before its first row, or before the first change after `updated_after` (to the millisecond). */
function startOf(window: PageWindow): PagePosition {
  if (window.updatedAfter === undefined) return { at: "0001-01-01 00:00:00.000000", id: 0 };
  const millisecond = new Date(window.updatedAfter).toISOString().replace("T", " ").replace("Z", "");
  return { at: `${millisecond}999`, id: Number.MAX_SAFE_INTEGER };
}
