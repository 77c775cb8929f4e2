import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { useNavigate, useParams } from "react-router";
import { ErrorLine } from "../components/ui.js";
import { problemOf, trpc } from "../trpc.js";

const MIN_PASSWORD = 10;

export function Invitation() {
  const { token = "" } = useParams();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const [password, setPassword] = useState("");
  const [repeat, setRepeat] = useState("");
  const [mismatch, setMismatch] = useState<string>();
  const invitation = useQuery({ queryKey: ["invitation", token], queryFn: () => trpc.invitation.get.query({ token }), retry: false });
  const accept = useMutation({
    mutationFn: () => trpc.invitation.accept.mutate({ token, password }),
    onSuccess: async () => {
      await queryClient.invalidateQueries();
      await navigate("/settings/api-keys");
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (password !== repeat) return setMismatch("The two passwords differ.");
    setMismatch(undefined);
    accept.mutate();
  };
  if (invitation.isPending) return <p className="loading">Loading…</p>;
  if (invitation.isError) {
    return (
      <main className="narrow">
        <h1>Invitation</h1>
        <ErrorLine error={problemOf(invitation.error).message} />
        <p className="muted">Ask a member of your team for a new link.</p>
      </main>
    );
  }
  return (
    <main className="narrow">
      <h1>Join {invitation.data.team_name}</h1>
      <p>
        Choose a password for <strong>{invitation.data.email}</strong>.
      </p>
      <form onSubmit={submit}>
        <label>
          Password
          <input type="password" autoComplete="new-password" required minLength={MIN_PASSWORD} value={password} onChange={(event) => setPassword(event.target.value)} />
        </label>
        <label>
          Repeat the password
          <input type="password" autoComplete="new-password" required minLength={MIN_PASSWORD} value={repeat} onChange={(event) => setRepeat(event.target.value)} />
        </label>
        <p className="muted">At least {MIN_PASSWORD} characters.</p>
        <ErrorLine error={mismatch ?? (accept.isError ? problemOf(accept.error).message : undefined)} />
        <button type="submit" disabled={accept.isPending}>
          Set password and sign in
        </button>
      </form>
    </main>
  );
}
