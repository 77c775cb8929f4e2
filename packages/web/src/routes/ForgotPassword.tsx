import { useMutation } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { Link } from "react-router";
import { ErrorLine, usePageTitle } from "../components/ui.js";
import { throttledMessage, trpc } from "../trpc.js";

/** Asks for a password reset link by e-mail; the answer is the same whether the e-mail has an account or not. */
export function ForgotPassword() {
  usePageTitle("Forgot your password");
  const [email, setEmail] = useState("");
  const request = useMutation({ mutationFn: () => trpc.session.requestReset.mutate({ email }) });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    request.mutate();
  };
  return (
    <main className="narrow">
      <h1>Forgot your password?</h1>
      {request.isSuccess ? (
        <p role="status">If {email} has an account, a link to choose a new password is on its way. It works once, within an hour.</p>
      ) : (
        <form onSubmit={submit}>
          <label>
            E-mail
            <input type="email" autoComplete="username" required value={email} onChange={(event) => setEmail(event.target.value)} />
          </label>
          <ErrorLine error={request.isError ? throttledMessage(request.error) : undefined} />
          <button type="submit" disabled={request.isPending}>
            Send me a link
          </button>
        </form>
      )}
      <p>
        <Link to="/sign-in">Back to sign in</Link>
      </p>
    </main>
  );
}
