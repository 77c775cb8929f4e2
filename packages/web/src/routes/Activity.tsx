import { useQuery } from "@tanstack/react-query";
import { useEffect, useMemo, useState } from "react";
import { Chart } from "../components/Chart.js";
import { Link, useParams, useSearchParams } from "react-router";
import { ErrorLine, Time } from "../components/ui.js";
import { problemOf, trpc } from "../trpc.js";
// The stream's own type: what the server sends, tied to it by the compiler.
import type { LiveCall } from "../../../server/src/api/console/live.js";

const FLOWS = ["post_purchase", "checkout_recovery", "contact_sync", "shipping_notification"] as const;
const JOB_STATUSES = ["pending", "running", "succeeded", "failed", "cancelled"] as const;
type Flow = (typeof FLOWS)[number];
type JobStatus = (typeof JOB_STATUSES)[number];

/** A filter kept in the address (so a view can be linked to and reloaded); empty removes it. */
function useParam(name: string): [string, (value: string) => void] {
  const [search, setSearch] = useSearchParams();
  return [
    search.get(name) ?? "",
    (value: string) =>
      setSearch(
        (current) => {
          const next = new URLSearchParams(current);
          if (value) next.set(name, value);
          else next.delete(name);
          return next;
        },
        { replace: true },
      ),
  ];
}

function Automations({ storeId }: { storeId: number }) {
  const [flowParam, setFlow] = useParam("flow");
  const [statusParam, setStatus] = useParam("status");
  const flow = (FLOWS as readonly string[]).includes(flowParam) ? (flowParam as Flow) : "";
  const status = (JOB_STATUSES as readonly string[]).includes(statusParam) ? (statusParam as JobStatus) : "";
  const activity = useQuery({
    queryKey: ["activity", storeId, flow, status],
    queryFn: () => trpc.activity.list.query({ store_id: storeId, flow: flow || undefined, status: status || undefined }),
    refetchInterval: 5000,
  });
  return (
    <>
      <div className="filters">
        <label>
          Flow
          <select value={flow} onChange={(event) => setFlow(event.target.value)}>
            <option value="">all</option>
            {FLOWS.map((name) => (
              <option key={name}>{name}</option>
            ))}
          </select>
        </label>
        <label>
          Status
          <select value={status} onChange={(event) => setStatus(event.target.value)}>
            <option value="">all</option>
            {JOB_STATUSES.map((name) => (
              <option key={name}>{name}</option>
            ))}
          </select>
        </label>
      </div>
      {activity.isError && <ErrorLine error={problemOf(activity.error).message} />}
      <h2>Runs</h2>
      <table tabIndex={0}>
        <thead>
          <tr>
            <th>Created</th>
            <th>Flow</th>
            <th>Record</th>
            <th>Status</th>
            <th>Attempts</th>
            <th>Error or reason</th>
            <th>Due</th>
            <th>Finished</th>
          </tr>
        </thead>
        <tbody>
          {activity.data?.runs.map((run) => (
            <tr key={run.id}>
              <td>
                <Time value={run.created_at} />
              </td>
              <td>{run.flow}</td>
              <td>
                {run.record_type} <code>{run.record_external_id}</code>
              </td>
              <td>
                <span className={`badge ${run.status}`}>{run.status}</span>
              </td>
              <td>{run.attempts}</td>
              <td>{run.error}</td>
              <td>
                <Time value={run.run_at} />
              </td>
              <td>
                <Time value={run.finished_at} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <h2>Messages</h2>
      <table tabIndex={0}>
        <thead>
          <tr>
            <th>Created</th>
            <th>Flow</th>
            <th>To</th>
            <th>Status</th>
            <th>Message id</th>
          </tr>
        </thead>
        <tbody>
          {activity.data?.messages.map((message) => (
            <tr key={message.id}>
              <td>
                <Time value={message.created_at} />
              </td>
              <td>{message.flow}</td>
              <td>{message.to_phone ?? <span className="muted">redacted</span>}</td>
              <td>{message.status}</td>
              <td>
                <code>{message.id}</code>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}

/** A time picked in the reader's clock (`datetime-local`) as an instant, or undefined. */
const instant = (local: string) => (local ? new Date(local).toISOString() : undefined);

function Requests({ storeId }: { storeId: number }) {
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

const number = (value: number) => value.toLocaleString();

/** Every refused line of an import, fetched a page at a time, saved as NDJSON. */
async function downloadErrors(storeId: number, importId: number): Promise<void> {
  const lines: string[] = [];
  let after = 0;
  for (;;) {
    const page = await trpc.imports.errors.query({ store_id: storeId, import_id: importId, after_line: after });
    for (const line of page) lines.push(JSON.stringify(line));
    const last = page.at(-1);
    if (!last || page.length < 5000) break;
    after = last.line;
  }
  const link = document.createElement("a");
  link.href = URL.createObjectURL(new Blob([lines.length ? `${lines.join("\n")}\n` : ""], { type: "application/x-ndjson" }));
  link.download = `import-${importId}-errors.ndjson`;
  link.click();
  URL.revokeObjectURL(link.href);
}

function Imports({ storeId }: { storeId: number }) {
  const imports = useQuery({
    queryKey: ["imports", storeId],
    queryFn: () => trpc.imports.list.query({ store_id: storeId }),
    // Each second while one is under way, else now and then.
    refetchInterval: (query) => (query.state.data?.some((row) => row.status === "queued" || row.status === "running") ? 1000 : 10_000),
  });
  const [problem, setProblem] = useState<string>();
  return (
    <>
      <p className="muted">
        A shop&apos;s history, imported as one NDJSON file: <code>npx @commerce-ingest/sdk import --store {storeId} --kind orders orders.ndjson.gz</code>. Imports store
        history: they trigger no automation.
      </p>
      {imports.isError && <ErrorLine error={problemOf(imports.error).message} />}
      <ErrorLine error={problem} />
      {imports.isPending ? (
        <p className="muted">Loading…</p>
      ) : imports.data?.length === 0 ? (
        <p className="muted">No imports yet.</p>
      ) : (
        <div className="scroll">
          <table tabIndex={0}>
            <thead>
              <tr>
                <th>Import</th>
                <th>Status</th>
                <th>Progress</th>
                <th>Created</th>
                <th>Updated</th>
                <th>Failed</th>
                <th>Rate</th>
                <th>Started</th>
                <th>Finished</th>
              </tr>
            </thead>
            <tbody>
              {imports.data?.map((row) => (
                <tr key={row.id}>
                  <td>
                    #{row.id} {row.kind}
                  </td>
                  <td>
                    <span className={`badge ${row.status === "succeeded" ? "" : row.status}`}>{row.status}</span>
                    {row.error && (
                      <div className="muted">
                        {row.error_code && <code>{row.error_code}</code>} {row.error}
                      </div>
                    )}
                  </td>
                  <td>
                    <progress max={Math.max(1, row.lines)} value={row.processed} aria-label={`Import ${row.id} progress`} />{" "}
                    <span>
                      {number(row.processed)} / {number(row.lines)}
                    </span>
                  </td>
                  <td>{number(row.created)}</td>
                  <td>{number(row.updated)}</td>
                  <td>
                    {number(row.failed)}
                    {row.failed > 0 && (
                      <>
                        {" "}
                        <button type="button" className="quiet" onClick={() => void downloadErrors(storeId, row.id).catch((error: unknown) => setProblem(problemOf(error).message))}>
                          Download errors
                        </button>
                      </>
                    )}
                  </td>
                  <td>{row.records_per_second === null ? "" : `${number(row.records_per_second)}/s`}</td>
                  <td>
                    <Time value={row.started_at} />
                  </td>
                  <td>
                    <Time value={row.finished_at} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}

const KIND_COLORS = { orders: "#2f5bd3", customers: "#1b8a5a", checkouts: "#c77700", shipments: "#7a4fd0" } as const;

function Overview({ storeId }: { storeId: number }) {
  const [rangeParam, setRange] = useParam("range");
  const range = rangeParam === "7d" ? "7d" : "24h";
  const overview = useQuery({ queryKey: ["overview", storeId, range], queryFn: () => trpc.overview.get.query({ store_id: storeId, range }), refetchInterval: 10_000 });
  const data = overview.data;
  const times = useMemo(() => data?.buckets.map((bucket) => Date.parse(bucket.at) / 1000) ?? [], [data]);
  const written = useMemo(
    () => (Object.keys(KIND_COLORS) as Array<keyof typeof KIND_COLORS>).map((kind) => ({ label: kind, color: KIND_COLORS[kind], values: data?.buckets.map((bucket) => bucket[kind]) ?? [] })),
    [data],
  );
  const refused = useMemo(() => [{ label: "refused calls", color: "#b42318", values: data?.buckets.map((bucket) => bucket.refused) ?? [] }], [data]);
  return (
    <>
      <div className="filters">
        <label>
          Over the last
          <select value={range} onChange={(event) => setRange(event.target.value === "7d" ? "7d" : "")}>
            <option value="24h">24 hours</option>
            <option value="7d">7 days</option>
          </select>
        </label>
      </div>
      {overview.isError && <ErrorLine error={problemOf(overview.error).message} />}
      {overview.isPending && <p className="muted">Loading…</p>}
      {data && (
        <>
          <p>
            {(Object.keys(KIND_COLORS) as Array<keyof typeof KIND_COLORS>).map((kind) => (
              <span key={kind} className="stat">
                <strong>{data.totals[kind].toLocaleString()}</strong> {kind}
              </span>
            ))}
            <span className="stat">
              <strong>{data.totals.refused.toLocaleString()}</strong> refused calls
            </span>
            <span className="stat">
              <strong>{data.backlog.due.toLocaleString()}</strong> automations due, {data.backlog.scheduled.toLocaleString()} scheduled
            </span>
          </p>
          <Chart title={`Records written, by kind (per ${data.bucket_seconds / 3600} h)`} times={times} series={written} />
          <Chart title="Refused calls" times={times} series={refused} height={160} />
          <p className="muted">Records count once, when they were last written (created or changed); refused calls are the store&apos;s 4xx and 5xx answers.</p>
        </>
      )}
    </>
  );
}

/** One call opened: what it answered, the record it wrote as stored now, and that record's automation runs. */
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
function Live({ storeId }: { storeId: number }) {
  const [calls, setCalls] = useState<LiveCall[]>([]);
  const [open, setOpen] = useState<number>();
  const [connected, setConnected] = useState(false);
  useEffect(() => {
    setCalls([]);
    const source = new EventSource(`/console/live/${storeId}`);
    source.onopen = () => setConnected(true);
    source.onerror = () => setConnected(false);
    source.addEventListener("call", (event) => {
      const call = JSON.parse((event as MessageEvent<string>).data) as LiveCall;
      setCalls((current) => [call, ...current.filter((known) => known.id !== call.id)].slice(0, 200));
    });
    return () => source.close();
  }, [storeId]);
  return (
    <>
      <p className="muted">
        {connected ? "Live: " : "Connecting… "}calls to this store appear as they arrive, from every server. Open one to see the record it wrote and the automations it
        caused.
      </p>
      {calls.length === 0 && <p className="muted">No call yet: push something to this store.</p>}
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

const TABS = { overview: "Overview", live: "Live", automations: "Automations", requests: "Request log", imports: "Imports" } as const;
type Tab = keyof typeof TABS;

export function Activity() {
  const storeId = Number(useParams().storeId);
  // The tab is in the address (`?tab=imports`), so each one can be linked to and reloaded.
  const [search, setSearch] = useSearchParams();
  const asked = search.get("tab");
  const tab: Tab = asked && asked in TABS ? (asked as Tab) : "overview";
  return (
    <section>
      <p>
        <Link to="/stores">← Stores</Link>
      </p>
      <h1>Store {storeId}: activity</h1>
      <div role="tablist" className="tabs">
        {(Object.keys(TABS) as Tab[]).map((name) => (
          <button key={name} type="button" role="tab" aria-selected={tab === name} onClick={() => setSearch(name === "overview" ? {} : { tab: name })}>
            {TABS[name]}
          </button>
        ))}
      </div>
      {tab === "overview" ? (
        <Overview storeId={storeId} />
      ) : tab === "live" ? (
        <Live storeId={storeId} />
      ) : tab === "automations" ? (
        <Automations storeId={storeId} />
      ) : tab === "requests" ? (
        <Requests storeId={storeId} />
      ) : (
        <Imports storeId={storeId} />
      )}
    </section>
  );
}
