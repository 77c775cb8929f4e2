import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { ConfirmButton, ErrorLine, Field, Time, usePageTitle } from "../components/ui.js";
import { problemOf, trpc } from "../trpc.js";
import { TwoFactorSection } from "./TwoFactor.js";

/** The signed-in account: its password, and its sessions (where and when each began and was last used), each one endable. */
export function Account() {
  usePageTitle("Your account");
  const queryClient = useQueryClient();
  const sessions = useQuery({ queryKey: ["sessions"], queryFn: () => trpc.session.list.query() });
  const refresh = () => queryClient.invalidateQueries({ queryKey: ["sessions"] });
  const end = useMutation({ mutationFn: (id: number) => trpc.session.end.mutate({ id }), onSuccess: refresh });
  const endOthers = useMutation({ mutationFn: () => trpc.session.endOthers.mutate(), onSuccess: refresh });
  const [current, setCurrent] = useState("");
  const [next, setNext] = useState("");
  const [repeat, setRepeat] = useState("");
  const change = useMutation({
    mutationFn: () => trpc.session.changePassword.mutate({ current_password: current, new_password: next }),
    onSuccess: async () => {
      setCurrent("");
      setNext("");
      setRepeat("");
      await refresh();
    },
  });
  const problem = change.isError ? problemOf(change.error) : undefined;
  const mismatch = repeat !== "" && repeat !== next ? "does not match the new password" : undefined;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!mismatch) change.mutate();
  };
  const others = sessions.data?.filter((session) => !session.current).length ?? 0;
  return (
    <section>
      <h1>Your account</h1>
      <h2>Password</h2>
      <form onSubmit={submit} className="stack">
        <Field label="Current password" error={problem?.fields.current_password}>
          <input type="password" autoComplete="current-password" required value={current} onChange={(event) => setCurrent(event.target.value)} />
        </Field>
        <Field label="New password" error={problem?.fields.new_password}>
          <input type="password" autoComplete="new-password" required minLength={10} value={next} onChange={(event) => setNext(event.target.value)} />
        </Field>
        <Field label="Repeat the new password" error={mismatch}>
          <input type="password" autoComplete="new-password" required value={repeat} onChange={(event) => setRepeat(event.target.value)} />
        </Field>
        {problem && !problem.fields.current_password && !problem.fields.new_password && <ErrorLine error={problem.message} />}
        <button type="submit" disabled={change.isPending}>
          Change password
        </button>
      </form>
      {change.data && (
        <p role="status">
          Password changed. {change.data.ended === 0 ? "No other session was open." : `${change.data.ended} other session${change.data.ended === 1 ? "" : "s"} ended.`}
        </p>
      )}
      <TwoFactorSection />
      <h2>Sessions</h2>
      <p className="muted">Where your account is signed in. Ending a session signs it out at once, its live views included.</p>
      {sessions.isError && <ErrorLine error={problemOf(sessions.error).message} />}
      <table tabIndex={0} className="requests">
        <thead>
          <tr>
            <th>Browser</th>
            <th>Address</th>
            <th>Last seen</th>
            <th className="wide">Signed in</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {sessions.data?.map((session) => (
            <tr key={session.id}>
              <td>
                {session.user_agent ?? <span className="muted">unknown</span>} {session.current && <span className="badge sent">this one</span>}
              </td>
              <td>{session.address}</td>
              <td>
                <Time value={session.last_seen_at} />
              </td>
              <td className="wide">
                <Time value={session.created_at} />
              </td>
              <td>
                {!session.current && (
                  <button type="button" className="quiet" aria-label={`End the session of ${session.user_agent ?? "an unknown browser"}`} disabled={end.isPending} onClick={() => end.mutate(session.id)}>
                    End
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <ErrorLine error={end.isError ? problemOf(end.error).message : undefined} />
      <div className="actions">
        <ConfirmButton
          className="quiet danger"
          disabled={others === 0 || endOthers.isPending}
          confirm="End every other session"
          question="Every other session of your account signs out now. This one stays."
          onConfirm={() => endOthers.mutate()}
        >
          End every other session
        </ConfirmButton>
      </div>
    </section>
  );
}
