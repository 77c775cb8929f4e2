import { useMutation, useQuery } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { Link, useNavigate, useParams } from "react-router";
import { ErrorLine, Field, usePageTitle } from "../components/ui.js";
import { problemOf, trpc } from "../trpc.js";

/** A reset link: a new password, once; every session of the account ends, and the person signs in again. */
export function ResetPassword() {
  usePageTitle("Choose a new password");
  const token = useParams().token ?? "";
  const navigate = useNavigate();
  const usable = useQuery({ queryKey: ["reset", token], queryFn: () => trpc.session.resetUsable.query({ token }), retry: false });
  const [password, setPassword] = useState("");
  const [repeat, setRepeat] = useState("");
  const reset = useMutation({
    mutationFn: () => trpc.session.reset.mutate({ token, password }),
    onSuccess: ({ email }) => navigate(`/sign-in?email=${encodeURIComponent(email)}&reset=1`),
  });
  const problem = reset.isError ? problemOf(reset.error) : undefined;
  const mismatch = repeat !== "" && repeat !== password ? "does not match the new password" : undefined;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!mismatch) reset.mutate();
  };
  return (
    <main className="narrow">
      <h1>Choose a new password</h1>
      {usable.isError ? (
        <>
          <ErrorLine error={problemOf(usable.error).message} />
          <p>
            <Link to="/forgot-password">Ask for a new link</Link>
          </p>
        </>
      ) : (
        <form onSubmit={submit}>
          <Field label="New password" error={problem?.fields.password}>
            <input type="password" autoComplete="new-password" required minLength={10} value={password} onChange={(event) => setPassword(event.target.value)} />
          </Field>
          <Field label="Repeat the new password" error={mismatch}>
            <input type="password" autoComplete="new-password" required value={repeat} onChange={(event) => setRepeat(event.target.value)} />
          </Field>
          {problem && !problem.fields.password && <ErrorLine error={problem.message} />}
          <p className="muted">Every session of your account ends: sign in again with the new password.</p>
          <button type="submit" disabled={reset.isPending || usable.isPending}>
            Set the new password
          </button>
        </form>
      )}
    </main>
  );
}
