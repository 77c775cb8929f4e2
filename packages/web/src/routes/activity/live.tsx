import { useQuery } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { ErrorLine, Time } from "../../components/ui.js";
import { problemOf, trpc } from "../../trpc.js";
// The stream's own type: what the server sends, tied to it by the compiler.
import type { LiveCall } from "../../../../server/src/api/console/live.js";

function CallDetail({ storeId, id }: { storeId: number; id: number }) {
  const detail = useQuery({ queryKey: ["live-detail", storeId, id], queryFn: () => trpc.live.detail.query({ store_id: storeId, id }) });
  if (detail.isError) return <ErrorLine error={problemOf(detail.error).message} />;
  const call = detail.data;
  if (!call) return <p className="muted">Loading…</p>;
  return (
    <div className="detail" aria-label={`Call ${call.request_id}`}>
      <p>
        <span className={`badge s${String(call.status)[0]}`}>{call.status}</span>{" "}
        <code>
          {call.method} {call.route}
        </code>{" "}
        <span className="muted">
          {call.latency_ms} ms · request <code>{call.request_id}</code> · {call.key ? `key ${call.key.name} (…${call.key.last4})` : "no key"}
        </span>
      </p>
      {call.error && (
        <p className="error">
          {call.error}
          {call.details && call.details.length > 0 && ": " + call.details.map((detail) => `${detail.path || "(body)"} ${detail.message}`).join("; ")}
        </p>
      )}
      {call.record && (
        <>
          <h3>
            {call.record.kind} <code>{call.record.external_id}</code>, as stored now
          </h3>
          {call.record.stored ? <pre tabIndex={0}>{JSON.stringify(call.record.stored, null, 2)}</pre> : <p className="muted">Not stored (or erased since).</p>}
          <h3>Its automation runs</h3>
          {call.runs.length === 0 ? (
            <p className="muted">None.</p>
          ) : (
            <ul>
              {call.runs.map((run) => (
                <li key={run.id}>
                  <code>{run.flow}</code> <span className={`badge ${run.status}`}>{run.status}</span> {run.last_error && <span className="muted">{run.last_error}</span>}
                </li>
              ))}
            </ul>
          )}
        </>
      )}
    </div>
  );
}

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
