import type { Page } from "@commerce-ingest/shared";
import { changeHorizon, type PageWindow } from "../db/pages.js";
import type { Db } from "../db/types.js";
import { AppError } from "../errors.js";

/** A list's query, as its schema parsed it. */
export type PageRequest = { updated_after?: string | undefined; limit?: number | undefined; cursor?: string | undefined };

const DEFAULT_LIMIT = 100;
const CHANGE_TIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{6}$/;

/** A cursor: where the page before ended (its last row's change time and id), opaque to callers. */
const encodeCursor = (at: string, id: number) => Buffer.from(JSON.stringify([at, id])).toString("base64url");

function decodeCursor(cursor: string): { at: string; id: number } {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
    if (Array.isArray(value) && typeof value[0] === "string" && CHANGE_TIME.test(value[0]) && Number.isSafeInteger(value[1]) && Number(value[1]) > 0) {
      return { at: value[0], id: Number(value[1]) };
    }
  } catch {
    // Refused below, as any other text that is not a cursor of ours.
  }
  throw new AppError("VALIDATION_FAILED", [{ path: "cursor", message: "is not a cursor this API gave: send `next_cursor` as received" }]);
}

/** The window of the page a request asks for, up to the change horizon read now (see `changeHorizon`). */
export async function pageWindow(db: Db, request: PageRequest): Promise<PageWindow> {
  const after = request.cursor === undefined ? undefined : decodeCursor(request.cursor);
  return { horizon: await changeHorizon(db), after, updatedAfter: request.updated_after, limit: request.limit ?? DEFAULT_LIMIT };
}

/** A page of records from rows read with one more than the limit (see `inWindow`): the extra row says there is a next page. */
export function toPage<Row extends { change_at: string; id: number }, Record>(rows: readonly Row[], window: PageWindow, toRecord: (row: Row) => Record): Page<Record> {
  const page = rows.slice(0, window.limit);
  const last = page.at(-1);
  return { data: page.map(toRecord), next_cursor: rows.length > window.limit && last ? encodeCursor(last.change_at, Number(last.id)) : null };
}
