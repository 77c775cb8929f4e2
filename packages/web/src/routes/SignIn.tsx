import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { Link, useNavigate, useSearchParams } from "react-router";
import { ErrorLine, usePageTitle } from "../components/ui.js";
import { throttledMessage, trpc } from "../trpc.js";

export function SignIn() {
  usePageTitle("Sign in");
  const navigate = useNavigate();
  const [params] = useSearchParams();
  const queryClient = useQueryClient();
  const [email, setEmail] = useState(params.get("email") ?? "");
  const [password, setPassword] = useState("");
  const signIn = useMutation({
    mutationFn: () => trpc.session.signIn.mutate({ email, password }),
    onSuccess: async () => {
      await queryClient.invalidateQueries();
      const next = params.get("next");
      await navigate(next?.startsWith("/") && !next.startsWith("//") ? next : "/settings/api-keys");
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    signIn.mutate();
  };
  return (
    <main className="narrow">
      <h1>Sign in</h1>
      {params.get("reset") === "1" && <p role="status">Your password is changed, and every session of your account has ended: sign in with the new one.</p>}
      <form onSubmit={submit}>
        <label>
          E-mail
          <input type="email" autoComplete="username" required value={email} onChange={(event) => setEmail(event.target.value)} />
        </label>
        <label>
          Password
          <input type="password" autoComplete="current-password" required value={password} onChange={(event) => setPassword(event.target.value)} />
        </label>
        <ErrorLine error={signIn.isError ? throttledMessage(signIn.error) : undefined} />
        <button type="submit" disabled={signIn.isPending}>
          Sign in
        </button>
      </form>
      <p>
        <Link to="/forgot-password">Forgot your password?</Link>
      </p>
      <p className="muted">New to the console? Open the invitation link you were sent to choose a password.</p>
    </main>
  );
}
