import { useQuery } from "@tanstack/react-query";
import { Link, useParams } from "react-router";
import { ErrorLine, Time, usePageTitle } from "../components/ui.js";
import { problemOf, trpc } from "../trpc.js";

const KINDS = ["orders", "customers", "checkouts", "shipments"] as const;
type Kind = (typeof KINDS)[number];

/** A record by its external_id: as stored now, its automation runs and the messages they sent. */
export function RecordPage() {
  const params = useParams();
  const storeId = Number(params.storeId);
  const kind = (KINDS as readonly string[]).includes(params.kind ?? "") ? (params.kind as Kind) : undefined;
  const externalId = params.externalId ?? "";
  usePageTitle(`${kind ?? "Record"} ${externalId} · Store ${storeId}`);
  const record = useQuery({
    queryKey: ["record", storeId, kind, externalId],
    queryFn: () => trpc.records.get.query({ store_id: storeId, kind: kind ?? "orders", external_id: externalId }),
    enabled: kind !== undefined,
    retry: false,
  });
  const data = record.data;
  return (
    <section>
      <p>
        <Link to={`/stores/${storeId}/activity?tab=messages`}>← Messages</Link>
      </p>
      <h1>
        {kind ? kind.slice(0, -1) : "Record"} <code>{externalId}</code>
      </h1>
      {!kind && <p className="error">No such kind of record.</p>}
      {record.isError && <ErrorLine error={problemOf(record.error).message} />}
      {data && (
        <>
          <h2>As stored</h2>
          <pre tabIndex={0}>{JSON.stringify(data.record, null, 2)}</pre>
          <h2>Automation runs</h2>
          {data.runs.length === 0 ? (
            <p className="muted">None.</p>
          ) : (
            <table tabIndex={0}>
              <thead>
                <tr>
                  <th>Created</th>
                  <th>Flow</th>
                  <th>Status</th>
                  <th>Attempts</th>
                  <th>Error or reason</th>
                </tr>
              </thead>
              <tbody>
                {data.runs.map((run) => (
                  <tr key={run.id}>
                    <td>
                      <Time value={run.created_at} />
                    </td>
                    <td>{run.flow}</td>
                    <td>
                      <span className={`badge ${run.status}`}>{run.status}</span>
                    </td>
                    <td>{run.attempts}</td>
                    <td>{run.last_error}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          <h2>Messages</h2>
          {data.messages.length === 0 ? (
            <p className="muted">None.</p>
          ) : (
            <table tabIndex={0}>
              <thead>
                <tr>
                  <th>Created</th>
                  <th>Flow</th>
                  <th>To</th>
                  <th>Status</th>
                </tr>
              </thead>
              <tbody>
                {data.messages.map((message) => (
                  <tr key={message.id}>
                    <td>
                      <Time value={message.created_at} />
                    </td>
                    <td>{message.flow}</td>
                    <td>{message.to_phone ?? <span className="muted">redacted</span>}</td>
                    <td>
                      <span className={`badge ${message.status}`}>{message.status}</span>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </>
      )}
    </section>
  );
}
