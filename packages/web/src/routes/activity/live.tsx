import { useEffect, useState } from "react";
import { ErrorLine, Time } from "../../components/ui.js";
import { CallDetail } from "./call.js";
// The stream's own type: what the server sends, tied to it by the compiler.
import type { LiveCall } from "../../../../server/src/api/console/live.js";

/** The store's calls as they arrive (server-sent events), newest first; a click opens one. */
export function Live({ storeId }: { storeId: number }) {
  const [calls, setCalls] = useState<LiveCall[]>([]);
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
      setCalls((current) => [call, ...current.filter((known) => known.id !== call.id)].slice(0, 200));
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
      {calls.length === 0 && !ended && <p className="muted">No call yet: push something to this store.</p>}
      <ul className="live">
        {calls.map((call) => (
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
