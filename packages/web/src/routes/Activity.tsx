import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { Link, useParams } from "react-router";
import { ErrorLine, Time } from "../components/ui.js";
import { problemOf, trpc } from "../trpc.js";

const FLOWS = ["post_purchase", "checkout_recovery", "contact_sync", "shipping_notification"] as const;
const JOB_STATUSES = ["pending", "running", "succeeded", "failed", "cancelled"] as const;
type Flow = (typeof FLOWS)[number];
type JobStatus = (typeof JOB_STATUSES)[number];

function Automations({ storeId }: { storeId: number }) {
  const [flow, setFlow] = useState<Flow | "">("");
  const [status, setStatus] = useState<JobStatus | "">("");
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
          <select value={flow} onChange={(event) => setFlow(event.target.value as Flow | "")}>
            <option value="">all</option>
            {FLOWS.map((name) => (
              <option key={name}>{name}</option>
            ))}
          </select>
        </label>
        <label>
          Status
          <select value={status} onChange={(event) => setStatus(event.target.value as JobStatus | "")}>
            <option value="">all</option>
            {JOB_STATUSES.map((name) => (
              <option key={name}>{name}</option>
            ))}
          </select>
        </label>
      </div>
      {activity.isError && <ErrorLine error={problemOf(activity.error).message} />}
      <h2>Runs</h2>
      <table>
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
      <table>
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

function Requests({ storeId }: { storeId: number }) {
  const [status, setStatus] = useState<"" | "2xx" | "4xx" | "5xx">("");
  const [requestId, setRequestId] = useState("");
  const requests = useQuery({
    queryKey: ["requests", storeId, status, requestId],
    queryFn: () => trpc.requests.list.query({ store_id: storeId, status: status || undefined, request_id: requestId.trim() || undefined }),
    refetchInterval: 5000,
  });
  return (
    <>
      <div className="filters">
        <label>
          Status
          <select value={status} onChange={(event) => setStatus(event.target.value as "" | "2xx" | "4xx" | "5xx")}>
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
      </div>
      <p className="muted">The last 7 days of API calls to this store: never bodies, phones or key values.</p>
      {requests.isError && <ErrorLine error={problemOf(requests.error).message} />}
      <table>
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
    </>
  );
}

export function Activity() {
  const storeId = Number(useParams().storeId);
  const [tab, setTab] = useState<"automations" | "requests">("automations");
  return (
    <section>
      <p>
        <Link to="/stores">← Stores</Link>
      </p>
      <h1>Store {storeId}: activity</h1>
      <div role="tablist" className="tabs">
        <button type="button" role="tab" aria-selected={tab === "automations"} onClick={() => setTab("automations")}>
          Automations
        </button>
        <button type="button" role="tab" aria-selected={tab === "requests"} onClick={() => setTab("requests")}>
          Request log
        </button>
      </div>
      {tab === "automations" ? <Automations storeId={storeId} /> : <Requests storeId={storeId} />}
    </section>
  );
}
