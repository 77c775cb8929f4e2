import { useQuery } from "@tanstack/react-query";
import { useMemo } from "react";
import { Chart } from "../../components/Chart.js";
import { ErrorLine } from "../../components/ui.js";
import { problemOf, trpc } from "../../trpc.js";
import { useParam } from "./params.js";

const KIND_COLORS = { orders: "#2f5bd3", customers: "#1b8a5a", checkouts: "#c77700", shipments: "#7a4fd0" } as const;

export function Overview({ storeId }: { storeId: number }) {
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
