import { useQuery } from "@tanstack/react-query";
import { ErrorLine } from "../../components/ui.js";
import { problemOf, trpc } from "../../trpc.js";

/** A body as the log keeps it: indented when it is whole JSON, as it is when it was cut (it ends with …). */
function Body({ label, text }: { label: string; text: string | null }) {
  if (text === null) return null;
  let shown = text;
  try {
    shown = JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    // cut at its size: shown as kept
  }
  return (
    <>
      <h3>{label}</h3>
      <pre tabIndex={0} aria-label={label}>
        {shown}
      </pre>
      {text.endsWith("…") && <p className="muted">Cut at its size: the log keeps the beginning of a large body.</p>}
    </>
  );
}

/** One logged call, opened: where it went, what it answered and why, its bodies (masked), the record it wrote and its automations. */
export function CallDetail({ storeId, id }: { storeId: number; id: number }) {
  const detail = useQuery({ queryKey: ["call-detail", storeId, id], queryFn: () => trpc.live.detail.query({ store_id: storeId, id }) });
  if (detail.isError) return <ErrorLine error={problemOf(detail.error).message} />;
  const call = detail.data;
  if (!call) return <p className="muted">Loading…</p>;
  return (
    <div className="detail" aria-label={`Call ${call.request_id}`}>
      <p>
        <span className={`badge s${String(call.status)[0]}`}>{call.status}</span>{" "}
        <code className="path">
          {call.method} {call.path ?? call.route}
        </code>{" "}
        {call.code && <code>{call.code}</code>}
      </p>
      <p className="muted">
        {new Date(call.at).toLocaleString()} · {call.latency_ms} ms · request <code>{call.request_id}</code> ·{" "}
        {call.key ? `key ${call.key.name} (…${call.key.last4})` : "no key"}
      </p>
      {call.error && (
        <p className="error">
          {call.error}
          {call.details && call.details.length > 0 && ": " + call.details.map((item) => `${item.path || "(body)"} ${item.message}`).join("; ")}
        </p>
      )}
      <Body label="Request body" text={call.request_body} />
      <Body label="Response body" text={call.response_body} />
      {call.request_body === null && call.response_body === null && <p className="muted">No body kept for this call.</p>}
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
