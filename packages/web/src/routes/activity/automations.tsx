import { useQuery } from "@tanstack/react-query";
import { Link } from "react-router";
import { ErrorLine, Time } from "../../components/ui.js";
import { problemOf, trpc } from "../../trpc.js";
import { recordPath } from "./messages.js";
import { useParam } from "./params.js";

const FLOWS = ["post_purchase", "checkout_recovery", "contact_sync", "shipping_notification"] as const;
const JOB_STATUSES = ["pending", "running", "succeeded", "failed", "cancelled"] as const;
type Flow = (typeof FLOWS)[number];
type JobStatus = (typeof JOB_STATUSES)[number];

export function Automations({ storeId }: { storeId: number }) {
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
                <Link to={recordPath(storeId, run.record_type, run.record_external_id)}>
                  {run.record_type} <code>{run.record_external_id}</code>
                </Link>
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
      <p className="muted">
        What each run sent, with its delivery attempts: <Link to="?tab=messages">Messages</Link>.
      </p>
    </>
  );
}

/** A time picked in the reader's clock (`datetime-local`) as an instant, or undefined. */
