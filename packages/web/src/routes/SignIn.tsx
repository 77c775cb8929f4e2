import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { useNavigate, useSearchParams } from "react-router";
import { ErrorLine, usePageTitle } from "../components/ui.js";
import { problemOf, trpc } from "../trpc.js";

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
      <form onSubmit={submit}>
        <label>
          E-mail
          <input type="email" autoComplete="username" required value={email} onChange={(event) => setEmail(event.target.value)} />
        </label>
        <label>
          Password
          <input type="password" autoComplete="current-password" required value={password} onChange={(event) => setPassword(event.target.value)} />
        </label>
        <ErrorLine error={signIn.isError ? problemOf(signIn.error).message : undefined} />
        <button type="submit" disabled={signIn.isPending}>
          Sign in
        </button>
      </form>
      <p className="muted">New to the console? Open the invitation link you were sent to choose a password.</p>
    </main>
  );
}
