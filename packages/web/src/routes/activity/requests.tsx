import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { ErrorLine, Time } from "../../components/ui.js";
import { problemOf, trpc } from "../../trpc.js";
import { useParam } from "./params.js";

const instant = (local: string) => (local ? new Date(local).toISOString() : undefined);

export function Requests({ storeId }: { storeId: number }) {
  const [statusParam, setStatus] = useParam("status");
  const [requestId, setRequestId] = useParam("request_id");
  const [from, setFrom] = useParam("from");
  const [to, setTo] = useParam("to");
  const status = ["2xx", "4xx", "5xx"].includes(statusParam) ? (statusParam as "2xx" | "4xx" | "5xx") : "";
  // The pages gone through: each starts after the last entry of the one before (none: the newest).
  const [pages, setPages] = useState<Array<{ at: string; id: number } | undefined>>([undefined]);
  const before = pages[pages.length - 1];
  const filters = { status, requestId, from, to };
  const [seen, setSeen] = useState(JSON.stringify(filters));
  if (seen !== JSON.stringify(filters)) {
    // Other filters: back to the newest page.
    setSeen(JSON.stringify(filters));
    setPages([undefined]);
  }
  const requests = useQuery({
    queryKey: ["requests", storeId, status, requestId, from, to, before],
    queryFn: () =>
      trpc.requests.list.query({ store_id: storeId, status: status || undefined, request_id: requestId.trim() || undefined, from: instant(from), to: instant(to), before }),
    // The log is where a developer watches calls arrive: its newest page is asked again each second.
    refetchInterval: before ? false : 1000,
  });
  const last = requests.data?.at(-1);
  return (
    <>
      <div className="filters">
        <label>
          Status
          <select value={status} onChange={(event) => setStatus(event.target.value)}>
            <option value="">all</option>
            <option>2xx</option>
            <option>4xx</option>
            <option>5xx</option>
          </select>
        </label>
        <label>
          Request id
          <input value={requestId} placeholder="X-Request-Id" onChange={(event) => setRequestId(event.target.value)} />
        </label>
        <label>
          From
          <input type="datetime-local" value={from} onChange={(event) => setFrom(event.target.value)} />
        </label>
        <label>
          To
          <input type="datetime-local" value={to} onChange={(event) => setTo(event.target.value)} />
        </label>
      </div>
      <p className="muted">The last 7 days of API calls to this store: never bodies, phones or key values.</p>
      {requests.isError && <ErrorLine error={problemOf(requests.error).message} />}
      <table tabIndex={0}>
        <thead>
          <tr>
            <th>Time</th>
            <th>Call</th>
            <th>Status</th>
            <th>Error</th>
            <th>Request id</th>
            <th>Key</th>
            <th>ms</th>
          </tr>
        </thead>
        <tbody>
          {requests.data?.map((row) => (
            <tr key={row.id}>
              <td>
                <Time value={row.at} />
              </td>
              <td>
                <code>
                  {row.method} {row.route}
                </code>
              </td>
              <td>
                <span className={`badge s${String(row.status)[0]}`}>{row.status}</span>
              </td>
              <td>{row.error}</td>
              <td>
                <code>{row.request_id}</code>
              </td>
              <td>{row.key ? `${row.key.name} (…${row.key.last4})` : ""}</td>
              <td>{row.latency_ms}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {requests.data?.length === 0 && <p className="muted">No call matches{from || to || status || requestId ? " these filters" : " yet"}.</p>}
      <div className="actions">
        <button type="button" className="quiet" disabled={pages.length === 1} onClick={() => setPages([undefined])}>
          Newest
        </button>
        <button type="button" className="quiet" disabled={!last || (requests.data?.length ?? 0) < 100} onClick={() => last && setPages([...pages, { at: last.at, id: last.id }])}>
          Older
        </button>
      </div>
    </>
  );
}
