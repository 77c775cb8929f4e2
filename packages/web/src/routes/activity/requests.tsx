import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { Link } from "react-router";
import { ErrorLine, Time } from "../../components/ui.js";
import { problemOf, trpc } from "../../trpc.js";
import { useParam } from "./params.js";

const instant = (local: string) => (local ? new Date(local).toISOString() : undefined);
const PAGE = 100;

/** A filter's text box, kept in the address. */
function TextFilter({ name, label, placeholder }: { name: string; label: string; placeholder: string }) {
  const [value, setValue] = useParam(name);
  return (
    <label>
      {label}
      <input value={value} placeholder={placeholder} onChange={(event) => setValue(event.target.value)} />
    </label>
  );
}

export function Requests({ storeId }: { storeId: number }) {
  const [status] = useParam("status");
  const [code] = useParam("code");
  const [route] = useParam("route");
  const [keyId, setKeyId] = useParam("key");
  const [externalId] = useParam("external_id");
  const [requestId] = useParam("request_id");
  const [from, setFrom] = useParam("from");
  const [to, setTo] = useParam("to");
  const keys = useQuery({ queryKey: ["keys"], queryFn: () => trpc.keys.list.query() });
  // The pages gone through: each starts after the last entry of the one before (none: the newest).
  const [pages, setPages] = useState<Array<{ at: string; id: number } | undefined>>([undefined]);
  const before = pages[pages.length - 1];
  const filters = { status, code, route, keyId, externalId, requestId, from, to };
  const [seen, setSeen] = useState(JSON.stringify(filters));
  if (seen !== JSON.stringify(filters)) {
    // Other filters: back to the newest page.
    setSeen(JSON.stringify(filters));
    setPages([undefined]);
  }
  const requests = useQuery({
    queryKey: ["requests", storeId, filters, before],
    queryFn: () =>
      trpc.requests.list.query({
        store_id: storeId,
        status: status.trim() || undefined,
        code: code.trim() || undefined,
        route: route.trim() || undefined,
        key_id: keyId ? Number(keyId) : undefined,
        external_id: externalId.trim() || undefined,
        request_id: requestId.trim() || undefined,
        from: instant(from),
        to: instant(to),
        before,
        limit: PAGE,
      }),
    // The log is where a developer watches calls arrive: its newest page is asked again each second.
    refetchInterval: before ? false : 1000,
    retry: false,
  });
  const last = requests.data?.at(-1);
  const filtered = Object.values(filters).some(Boolean);
  return (
    <>
      <div className="filters">
        <TextFilter name="status" label="Status" placeholder="422 or 4xx" />
        <TextFilter name="code" label="Code" placeholder="validation_failed" />
        <TextFilter name="route" label="Route" placeholder="/api/v1/stores/{store_id}/orders" />
        <label>
          Key
          <select value={keyId} onChange={(event) => setKeyId(event.target.value)}>
            <option value="">all</option>
            {keys.data?.map((key) => (
              <option key={key.id} value={key.id}>
                {key.name} (…{key.last4})
              </option>
            ))}
          </select>
        </label>
        <TextFilter name="external_id" label="Record" placeholder="external_id" />
        <TextFilter name="request_id" label="Request id" placeholder="starts with" />
        <label>
          From
          <input type="datetime-local" value={from} onChange={(event) => setFrom(event.target.value)} />
        </label>
        <label>
          To
          <input type="datetime-local" value={to} onChange={(event) => setTo(event.target.value)} />
        </label>
      </div>
      <p className="muted">
        Recent API calls to this store. Open one for its request and response bodies (phones, e-mails and other personal fields masked); never key values.
      </p>
      {requests.isError && <ErrorLine error={`These filters cannot be used: ${problemOf(requests.error).message}`} />}
      <table tabIndex={0} className="requests">
        <thead>
          <tr>
            <th>Time</th>
            <th>Status</th>
            <th>Call</th>
            <th>Error</th>
            <th className="wide">Request id</th>
            <th className="wide">Key</th>
            <th className="wide">ms</th>
          </tr>
        </thead>
        <tbody>
          {requests.data?.map((row) => (
            <tr key={row.id}>
              <td>
                <Link to={`/stores/${storeId}/requests/${row.id}`} title="Open this call">
                  <Time value={row.at} />
                </Link>
              </td>
              <td>
                <span className={`badge s${String(row.status)[0]}`}>{row.status}</span>
              </td>
              <td>
                <code className="path">
                  {row.method} {row.path ?? row.route}
                </code>
              </td>
              <td>
                {row.code && <code>{row.code}</code>} {row.error}
              </td>
              <td className="wide">
                <code>{row.request_id}</code>
              </td>
              <td className="wide">{row.key ? `${row.key.name} (…${row.key.last4})` : ""}</td>
              <td className="wide">{row.latency_ms}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {requests.data?.length === 0 && <p className="muted">No call matches{filtered ? " these filters" : " yet"}.</p>}
      <UnknownKeys storeId={storeId} />
      <div className="actions">
        <button type="button" className="quiet" disabled={pages.length === 1} onClick={() => setPages([undefined])}>
          Newest
        </button>
        <button type="button" className="quiet" disabled={!last || (requests.data?.length ?? 0) < PAGE} onClick={() => last && setPages([...pages, { at: last.at, id: last.id }])}>
          Older
        </button>
      </div>
    </>
  );
}

/** Calls to this store with keys no team has: a mistyped, deleted long ago or guessed key, by its first characters. */
function UnknownKeys({ storeId }: { storeId: number }) {
  const unknown = useQuery({ queryKey: ["unknown-keys", storeId], queryFn: () => trpc.unknownKeys.list.query({ store_id: storeId }), refetchInterval: 5000 });
  if (!unknown.data || unknown.data.length === 0) return null;
  return (
    <>
      <h2>Calls with unknown keys</h2>
      <p className="muted">Answered 401: no team has these keys. Only their first characters are kept.</p>
      <table tabIndex={0} className="requests">
        <thead>
          <tr>
            <th>Key starts with</th>
            <th>Calls</th>
            <th>Last</th>
            <th className="wide">First</th>
          </tr>
        </thead>
        <tbody>
          {unknown.data.map((row) => (
            <tr key={row.key_prefix}>
              <td>
                <code>{row.key_prefix === "*" ? "(others)" : row.key_prefix}</code>
              </td>
              <td>{row.calls}</td>
              <td>
                <Time value={row.last_at} />
              </td>
              <td className="wide">
                <Time value={row.first_at} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}
