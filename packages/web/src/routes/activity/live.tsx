import { useEffect, useRef, useState } from "react";
import { ErrorLine, Time } from "../../components/ui.js";
import { CallDetail } from "./call.js";
// The stream's own type: what the server sends, tied to it by the compiler.
import type { LiveCall } from "../../../../server/src/api/console/live.js";

/** Whether a call passes the view's filters: a status (`422`) or class (`4xx`), a code, a text in its path or record. */
function passes(call: LiveCall, filter: { status: string; code: string; text: string }): boolean {
  const status = filter.status.trim().toLowerCase();
  if (status && !(status.endsWith("xx") ? String(call.status)[0] === status[0] : String(call.status) === status)) return false;
  if (filter.code.trim() && call.code !== filter.code.trim()) return false;
  const text = filter.text.trim();
  return !text || `${call.path ?? call.route} ${call.record?.external_id ?? call.external_id ?? ""} ${call.request_id}`.includes(text);
}

/** The store's calls as they arrive (server-sent events), newest first; a click opens one. Pause holds new ones back. */
export function Live({ storeId }: { storeId: number }) {
  const [calls, setCalls] = useState<LiveCall[]>([]);
  const [paused, setPaused] = useState(false);
  const [held, setHeld] = useState<LiveCall[]>([]);
  const pausedRef = useRef(false);
  const [filter, setFilter] = useState({ status: "", code: "", text: "" });
  const [open, setOpen] = useState<number>();
  const [connected, setConnected] = useState(false);
  const [ended, setEnded] = useState<string>();
  useEffect(() => {
    setCalls([]);
    setEnded(undefined);
    const source = new EventSource(`/console/live/${storeId}`);
    source.onopen = () => setConnected(true);
    // A refusal (signed out, another team's store) closes the source for good; a dropped connection is retried.
    source.onerror = () => {
      setConnected(false);
      if (source.readyState === EventSource.CLOSED) setEnded("The live view could not connect: this store is not your team's, or your session has ended. Sign in again to follow it.");
    };
    // The session ended (sign-out, removal, expiry): the stream ends with it, and is not retried.
    source.addEventListener("end", () => {
      source.close();
      setConnected(false);
      setEnded("Your session has ended: sign in again to follow this store's calls.");
    });
    source.addEventListener("call", (event) => {
      const call = JSON.parse((event as MessageEvent<string>).data) as LiveCall;
      // Paused: held back (the newest 200), shown at resume; the list stays still to be read.
      if (pausedRef.current) setHeld((current) => [call, ...current].slice(0, 200));
      else setCalls((current) => [call, ...current.filter((known) => known.id !== call.id)].slice(0, 200));
    });
    return () => source.close();
  }, [storeId]);
  return (
    <>
      <p className="muted">
        {connected ? "Live: " : ended ? "" : "Connecting… "}calls to this store appear as they arrive, from every server. Open one to see the record it wrote and the automations it
        caused.
      </p>
      {ended && <ErrorLine error={ended} />}
      <div className="filters">
        <button
          type="button"
          aria-pressed={paused}
          onClick={() => {
            const next = !paused;
            pausedRef.current = next;
            setPaused(next);
            if (!next) {
              setCalls((current) => [...held, ...current.filter((known) => !held.some((call) => call.id === known.id))].slice(0, 200));
              setHeld([]);
            }
          }}
        >
          {paused ? "Resume" : "Pause"}
        </button>
        <label>
          Status
          <input value={filter.status} placeholder="422 or 4xx" onChange={(event) => setFilter({ ...filter, status: event.target.value })} />
        </label>
        <label>
          Code
          <input value={filter.code} placeholder="rate_limited" onChange={(event) => setFilter({ ...filter, code: event.target.value })} />
        </label>
        <label>
          Contains
          <input value={filter.text} placeholder="path, record or request id" onChange={(event) => setFilter({ ...filter, text: event.target.value })} />
        </label>
      </div>
      {paused && (
        <p className="muted" role="status">
          Paused: {held.length} new {held.length === 1 ? "call" : "calls"} held back.
        </p>
      )}
      {calls.length === 0 && !ended && <p className="muted">No call yet: push something to this store.</p>}
      <ul className="live">
        {calls.filter((call) => passes(call, filter)).map((call) => (
          <li key={call.id}>
            <button type="button" className="quiet row" aria-expanded={open === call.id} onClick={() => setOpen(open === call.id ? undefined : call.id)}>
              <span className={`badge s${String(call.status)[0]}`}>{call.status}</span>{" "}
              <code>
                {call.method} {call.route}
              </code>{" "}
              {call.record && <code>{call.record.external_id}</code>} <Time value={call.at} />
            </button>
            {open === call.id && <CallDetail storeId={storeId} id={call.id} />}
          </li>
        ))}
      </ul>
    </>
  );
}
