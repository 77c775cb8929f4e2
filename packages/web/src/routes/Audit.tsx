import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { ErrorLine, Time, usePageTitle } from "../components/ui.js";
import { problemOf, trpc } from "../trpc.js";
import { useParam } from "./activity/params.js";

const ACTIONS = [
  "session.signed_in",
  "session.sign_in_failed",
  "session.signed_out",
  "session.ended",
  "account.password_changed",
  "account.reset_requested",
  "account.password_reset",
  "member.invited",
  "member.joined",
  "member.removed",
  "member.role_changed",
  "invitation.renewed",
  "invitation.revoked",
  "key.created",
  "key.renamed",
  "key.rolled",
  "key.deleted",
  "store.created",
  "store.renamed",
  "store.changed",
  "store.paused",
  "store.resumed",
  "endpoint.set",
  "endpoint.secret_rolled",
  "endpoint.removed",
  "message.resent",
] as const;
type Action = (typeof ACTIONS)[number];

/** Who changed the team's keys, stores and members: newest first, a hundred at a time. */
export function Audit() {
  usePageTitle("Audit log");
  // The pages seen so far: each starts before the last entry of the one before.
  const [pages, setPages] = useState<Array<number | undefined>>([undefined]);
  const before = pages[pages.length - 1];
  const [action, setAction] = useParam("action");
  const [actor, setActor] = useParam("member");
  const [seen, setSeen] = useState(`${action}|${actor}`);
  if (seen !== `${action}|${actor}`) {
    setSeen(`${action}|${actor}`);
    setPages([undefined]);
  }
  const members = useQuery({ queryKey: ["team"], queryFn: () => trpc.team.members.query() });
  const audit = useQuery({
    queryKey: ["audit", before, action, actor],
    queryFn: () => trpc.team.audit.query({ before, action: (action || undefined) as Action | undefined, actor: actor || undefined }),
    retry: false,
  });
  const last = audit.data?.at(-1);
  return (
    <section>
      <h1>Audit log</h1>
      <p className="muted">Every change to the team&apos;s keys, stores, members and delivery, and every sign-in, by whom (a member&apos;s e-mail, or the operator), from where.</p>
      <div className="filters">
        <label>
          Action
          <select value={action} onChange={(event) => setAction(event.target.value)}>
            <option value="">all</option>
            {ACTIONS.map((name) => (
              <option key={name}>{name}</option>
            ))}
          </select>
        </label>
        <label>
          Member
          <select value={actor} onChange={(event) => setActor(event.target.value)}>
            <option value="">all</option>
            {members.data?.members.map((member) => (
              <option key={member.id}>{member.email}</option>
            ))}
          </select>
        </label>
      </div>
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
              <th>From</th>
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
                <td>
                  {entry.address}
                  {entry.user_agent && <div className="muted">{entry.user_agent}</div>}
                </td>
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
