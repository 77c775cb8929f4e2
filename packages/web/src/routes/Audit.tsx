import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { ErrorLine, Time, usePageTitle } from "../components/ui.js";
import { problemOf, trpc } from "../trpc.js";

/** Who changed the team's keys, stores and members: newest first, a hundred at a time. */
export function Audit() {
  usePageTitle("Audit log");
  // The pages seen so far: each starts before the last entry of the one before.
  const [pages, setPages] = useState<Array<number | undefined>>([undefined]);
  const before = pages[pages.length - 1];
  const audit = useQuery({ queryKey: ["audit", before], queryFn: () => trpc.team.audit.query({ before }) });
  const last = audit.data?.at(-1);
  return (
    <section>
      <h1>Audit log</h1>
      <p className="muted">Every change to the team&apos;s keys, stores and members, by whom: a member&apos;s e-mail, or the operator.</p>
      {audit.isError && <ErrorLine error={problemOf(audit.error).message} />}
      {audit.isPending ? (
        <p className="muted">Loading…</p>
      ) : audit.data?.length === 0 ? (
        <p className="muted">Nothing has changed yet.</p>
      ) : (
        <table tabIndex={0}>
          <thead>
            <tr>
              <th>When</th>
              <th>Who</th>
              <th>What</th>
              <th>Of</th>
            </tr>
          </thead>
          <tbody>
            {audit.data?.map((entry) => (
              <tr key={entry.id}>
                <td>
                  <Time value={entry.created_at} />
                </td>
                <td>{entry.actor}</td>
                <td>
                  <code>{entry.action}</code>
                </td>
                <td>{entry.target}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <div className="actions">
        <button type="button" className="quiet" disabled={pages.length === 1} onClick={() => setPages(pages.slice(0, -1))}>
          Newer
        </button>
        <button type="button" className="quiet" disabled={!last || (audit.data?.length ?? 0) < 100} onClick={() => last && setPages([...pages, last.id])}>
          Older
        </button>
      </div>
    </section>
  );
}
