import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { Link, useNavigate, useParams } from "react-router";
import { ErrorLine, Field, FormProblem, usePageTitle } from "../components/ui.js";
import { problemOf, trpc } from "../trpc.js";

const MIN_PASSWORD = 10;

/**
 * An invitation link. A new person chooses a password; a person who has an
 * account (in another team) signs in and joins. The page never says which one
 * the e-mail is: only the account's owner, signing in, finds out.
 */
export function Invitation() {
  usePageTitle("Invitation");
  const { token = "" } = useParams();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const [password, setPassword] = useState("");
  const [repeat, setRepeat] = useState("");
  const [mismatch, setMismatch] = useState<string>();
  const invitation = useQuery({ queryKey: ["invitation", token], queryFn: () => trpc.invitation.get.query({ token }), retry: false });
  const me = useQuery({ queryKey: ["me"], queryFn: () => trpc.session.me.query() });
  const enter = async () => {
    queryClient.clear();
    await navigate("/settings/api-keys");
  };
  const accept = useMutation({ mutationFn: () => trpc.invitation.accept.mutate({ token, password }) });
  const join = useMutation({ mutationFn: () => trpc.invitation.join.mutate({ token }), onSuccess: enter });
  const signOut = useMutation({ mutationFn: () => trpc.session.signOut.mutate(), onSuccess: () => queryClient.invalidateQueries({ queryKey: ["me"] }) });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (password !== repeat) return setMismatch("The two passwords differ.");
    setMismatch(undefined);
    accept.mutate();
  };
  if (invitation.isPending || me.isPending) return <p className="loading">Loading…</p>;
  if (invitation.isError) {
    return (
      <main className="narrow">
        <h1>Invitation</h1>
        <ErrorLine error={problemOf(invitation.error).message} />
        <p className="muted">Ask a member of your team for a new link.</p>
      </main>
    );
  }
  const { email, team_name: teamName } = invitation.data;
  const signInLink = `/sign-in?${new URLSearchParams({ next: `/invite/${token}`, email }).toString()}`;
  const signedIn = me.data;
  if (signedIn) {
    const same = signedIn.email.toLowerCase() === email.toLowerCase();
    return (
      <main className="narrow">
        <h1>Join {teamName}</h1>
        {same ? (
          <>
            <p>
              You are signed in as <strong>{signedIn.email}</strong>. Join {teamName}; you can switch between your teams at the top of the console.
            </p>
            <ErrorLine error={join.isError ? problemOf(join.error).message : undefined} />
            <button type="button" onClick={() => join.mutate()} disabled={join.isPending}>
              Join {teamName}
            </button>
          </>
        ) : (
          <>
            <p>
              This invitation is for <strong>{email}</strong>, and you are signed in as <strong>{signedIn.email}</strong>.
            </p>
            <button type="button" onClick={() => signOut.mutate()} disabled={signOut.isPending}>
              Sign out to continue
            </button>
          </>
        )}
      </main>
    );
  }
  const refused = accept.isError ? problemOf(accept.error) : undefined;
  if (accept.isSuccess) {
    return (
      <main className="narrow">
        <h1>Check your e-mail</h1>
        <p role="status">
          We sent a mail to <strong>{email}</strong>. Open the link in it to confirm the address is yours and finish joining {teamName}.
        </p>
        <p className="muted">
          If {email} already has an account, the mail says so instead: <Link to={signInLink}>sign in</Link>, then open this invitation again.
        </p>
      </main>
    );
  }
  return (
    <main className="narrow">
      <h1>Join {teamName}</h1>
      <p>
        Already have an account with <strong>{email}</strong>? <Link to={signInLink}>Sign in to accept</Link>.
      </p>
      <h2>New here? Choose a password</h2>
      <form onSubmit={submit}>
        <Field label="Password" error={refused?.fields.password}>
          <input type="password" autoComplete="new-password" required minLength={MIN_PASSWORD} value={password} onChange={(event) => setPassword(event.target.value)} />
        </Field>
        <Field label="Repeat the password" error={mismatch}>
          <input type="password" autoComplete="new-password" required minLength={MIN_PASSWORD} value={repeat} onChange={(event) => setRepeat(event.target.value)} />
        </Field>
        <p className="muted">At least {MIN_PASSWORD} characters.</p>
        <FormProblem problem={refused} fields={["password"]} />
        <button type="submit" disabled={accept.isPending}>
          Choose this password
        </button>
      </form>
    </main>
  );
}
