import { parseCookie } from "cookie";
import express, { type Request, type Response } from "express";
import type { Services } from "../../context.js";
import { findSession, sessionUsable } from "../../accounts/member.service.js";
import { getTeamStore } from "../../tenancy/tenant.service.js";
import { AppError } from "../../errors.js";
import { toErrorResponse } from "../../error-response.js";
import { errorForLog } from "../../logger.js";
import { toRequestEntry } from "../../requests/request-log.service.js";
import { SESSION_COOKIE } from "./console.procedure.js";

/** Where the live view's stream is served: `/console/live/<store id>`. */
export const LIVE_PREFIX = "/console/live";

/** How often the stream looks for calls the request log has written (by any process). */
const POLL_MS = 250;
/** How long a browser waits before reconnecting a stream that ended. */
const RECONNECT_MS = 1000;
/** A comment this often keeps proxies from closing a quiet stream. */
const HEARTBEAT_MS = 15_000;
/** How often the stream checks that its session is still there: it ends within this of a sign-out, a removal or an expiry. */
const SESSION_CHECK_MS = 1_000;

/** One call, as the live view streams it (the console reads this type). */
export type LiveCall = ReturnType<typeof entryOf>;

/** One call, as the live view lists it: as the request log does, with the record it wrote. */
function entryOf(row: Parameters<typeof toRequestEntry>[0] & { record_kind: string | null; record_external_id: string | null }) {
  return { ...toRequestEntry(row), record: row.record_kind && row.record_external_id !== null ? { kind: row.record_kind, external_id: row.record_external_id } : null };
}

/**
 * The live view: a store's API calls as server-sent events, the latest 20
 * first, then each new one as the request log records it (every process
 * writes there, so calls to any server arrive). Signed-in members of the
 * store's team only; another team's store answers 404, as an unknown one.
 */
export function createLiveView(services: Services): express.Router {
  const live = express.Router();
  live.get("/:storeId", async (req: Request, res: Response) => {
    res.locals.route = `${LIVE_PREFIX}/{store_id}`;
    const storeId = Number(req.params.storeId);
    let sessionId: number;
    try {
      const session = await findSession(services.db, services.accounts.settings, parseCookie(req.headers.cookie ?? "")[SESSION_COOKIE]);
      if (!session) throw new AppError("SIGN_IN_REQUIRED");
      sessionId = session.sessionId;
      // Another team's store, or no store at all, answers as an unknown one.
      if (!Number.isSafeInteger(storeId) || storeId <= 0) throw new AppError("ADMIN_STORE_NOT_FOUND");
      await getTeamStore(services.db, session.teamId, storeId);
    } catch (error) {
      const answer = toErrorResponse(error);
      if (answer.unexpected) services.logger.warn({ err: errorForLog(answer.unexpected) }, "live view could not start");
      return void res.status(answer.status).set(answer.headers).json(answer.body);
    }

    res.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-store", Connection: "keep-alive", "X-Accel-Buffering": "no" });
    // Sent at once, so the browser knows the stream is open even before a first call arrives.
    res.write(`retry: ${RECONNECT_MS}\n\n`);
    const query = (after: number | undefined) => {
      let q = services.db
        .selectFrom("request_log as r")
        .leftJoin("api_keys as k", "k.id", "r.key_id")
        .select(["r.id", "r.created_at", "r.method", "r.route", "r.path", "r.status", "r.code", "r.error", "r.request_id", "r.latency_ms", "k.name as key_name", "k.last4 as key_last4", "r.record_kind", "r.record_external_id"])
        .where("r.store_id", "=", storeId);
      if (after !== undefined) q = q.where("r.id", ">", after);
      return q.orderBy("r.id", after === undefined ? "desc" : "asc").limit(after === undefined ? 20 : 200).execute();
    };
    // A browser reconnecting names the last call it had: it gets the ones after it, none twice.
    const lastEventId = Number(req.headers["last-event-id"]);
    let last = Number.isSafeInteger(lastEventId) && lastEventId > 0 ? lastEventId : 0;
    let closed = false;
    let reading = false;
    const send = (rows: Awaited<ReturnType<typeof query>>) => {
      for (const row of rows) {
        last = Math.max(last, row.id);
        res.write(`id: ${row.id}\nevent: call\ndata: ${JSON.stringify(entryOf(row))}\n\n`);
      }
    };
    try {
      send(last > 0 ? await query(last) : (await query(undefined)).reverse());
    } catch (error) {
      // The browser reconnects after `retry` and starts again.
      services.logger.warn({ err: errorForLog(error) }, "live view could not start");
      return void res.end();
    }
    const poll = setInterval(() => {
      // One read at a time: a slow one must not send a call twice.
      if (closed || reading) return;
      reading = true;
      query(last)
        .then(send, (error: unknown) => services.logger.warn({ err: errorForLog(error) }, "live view could not read"))
        .finally(() => (reading = false));
    }, POLL_MS);
    const heartbeat = setInterval(() => res.write(": still here\n\n"), HEARTBEAT_MS);
    // The stream is its session's: once the session is gone (signed out, member removed, expired), so is the stream.
    // It says why, and the browser's reconnection then meets a 401.
    const sessionCheck = setInterval(() => {
      if (closed) return;
      sessionUsable(services.db, services.accounts.settings, sessionId).then(
        (usable) => {
          if (usable || closed) return;
          stop();
          res.write(`event: end\ndata: {"reason":"session_ended"}\n\n`);
          res.end();
        },
        (error: unknown) => services.logger.warn({ err: errorForLog(error) }, "live view could not check its session"),
      );
    }, SESSION_CHECK_MS);
    function stop() {
      closed = true;
      clearInterval(poll);
      clearInterval(heartbeat);
      clearInterval(sessionCheck);
    }
    req.on("close", stop);
  });
  return live;
}
