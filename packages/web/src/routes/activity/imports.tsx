import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { ErrorLine, Time } from "../../components/ui.js";
import { problemOf, trpc } from "../../trpc.js";

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

export function Imports({ storeId }: { storeId: number }) {
  const imports = useQuery({
    queryKey: ["imports", storeId],
    queryFn: () => trpc.imports.list.query({ store_id: storeId }),
    // Each second while one is under way, else now and then.
    refetchInterval: (query) => (query.state.data?.some((row) => row.status === "queued" || row.status === "running") ? 1000 : 3_000),
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
                  <td>{row.started_at ? <Time value={row.started_at} /> : <span className="muted">not yet</span>}</td>
                  <td>{row.finished_at ? <Time value={row.finished_at} /> : <span className="muted">{row.status === "queued" || row.status === "running" ? row.status : "never"}</span>}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}
