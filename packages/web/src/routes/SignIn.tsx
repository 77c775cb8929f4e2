import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { Link, useNavigate, useSearchParams } from "react-router";
import { ErrorLine, usePageTitle } from "../components/ui.js";
import { problemOf, throttledMessage, trpc } from "../trpc.js";
import { RecoveryCodes, SetupSecret } from "./TwoFactor.js";

type Pending = { need: "code" | "setup"; challenge: string };

export function SignIn() {
  usePageTitle("Sign in");
  const navigate = useNavigate();
  const [params] = useSearchParams();
  const queryClient = useQueryClient();
  const [email, setEmail] = useState(params.get("email") ?? "");
  const [password, setPassword] = useState("");
  // The right password, and a second factor still to come: its code, or its setup (the team requires it).
  const [pending, setPending] = useState<Pending>();
  const done = async () => {
    await queryClient.invalidateQueries();
    const next = params.get("next");
    await navigate(next?.startsWith("/") && !next.startsWith("//") ? next : "/settings/api-keys");
  };
  const signIn = useMutation({
    mutationFn: () => trpc.session.signIn.mutate({ email, password }),
    onSuccess: async (outcome) => {
      if ("challenge" in outcome) setPending({ need: outcome.second_factor, challenge: outcome.challenge });
      else await done();
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    signIn.mutate();
  };
  if (pending?.need === "code") return <CodeStep challenge={pending.challenge} onDone={done} onRestart={() => setPending(undefined)} />;
  if (pending?.need === "setup") return <SetupStep challenge={pending.challenge} onDone={done} onRestart={() => setPending(undefined)} />;
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

/** The second factor: the authenticator's code, or one of the recovery codes. */
function CodeStep({ challenge, onDone, onRestart }: { challenge: string; onDone: () => Promise<void>; onRestart: () => void }) {
  const [recovery, setRecovery] = useState(false);
  const [code, setCode] = useState("");
  const answer = useMutation({
    mutationFn: () => trpc.session.secondFactor.mutate(recovery ? { challenge, recovery_code: code } : { challenge, code }),
    onSuccess: onDone,
  });
  const expired = answer.isError && problemOf(answer.error).code === "challenge_invalid";
  const submit = (event: FormEvent) => {
    event.preventDefault();
    answer.mutate();
  };
  return (
    <main className="narrow">
      <h1>Two-factor sign-in</h1>
      <form onSubmit={submit}>
        <label>
          {recovery ? "Recovery code" : "Code from your authenticator app"}
          <input
            autoComplete="one-time-code"
            inputMode={recovery ? "text" : "numeric"}
            required
            value={code}
            onChange={(event) => setCode(event.target.value)}
          />
        </label>
        <ErrorLine error={answer.isError ? problemOf(answer.error).message : undefined} />
        <button type="submit" disabled={answer.isPending || expired}>
          Verify
        </button>
      </form>
      <p>
        <button
          type="button"
          className="quiet"
          onClick={() => {
            setRecovery(!recovery);
            setCode("");
          }}
        >
          {recovery ? "Use the authenticator's code" : "Use a recovery code instead"}
        </button>{" "}
        {expired && (
          <button type="button" className="quiet" onClick={onRestart}>
            Sign in again
          </button>
        )}
      </p>
    </main>
  );
}

/** The team requires two-factor sign-in: set it up now, before the session opens. */
function SetupStep({ challenge, onDone, onRestart }: { challenge: string; onDone: () => Promise<void>; onRestart: () => void }) {
  const begin = useMutation({ mutationFn: () => trpc.session.setupBegin.mutate({ challenge }) });
  const [code, setCode] = useState("");
  const confirm = useMutation({ mutationFn: () => trpc.session.setupConfirm.mutate({ challenge, code }) });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    confirm.mutate();
  };
  if (confirm.data) {
    return (
      <main className="narrow">
        <h1>Two-factor sign-in is on</h1>
        <RecoveryCodes codes={confirm.data.recovery_codes} />
        <button type="button" onClick={() => void onDone()}>
          Continue to the console
        </button>
      </main>
    );
  }
  return (
    <main className="narrow">
      <h1>Set up two-factor sign-in</h1>
      <p>Your team requires a code from an authenticator app at each sign-in. Set it up to continue.</p>
      {!begin.data ? (
        <>
          <ErrorLine error={begin.isError ? problemOf(begin.error).message : undefined} />
          <button type="button" onClick={() => begin.mutate()} disabled={begin.isPending}>
            Start
          </button>{" "}
          {begin.isError && (
            <button type="button" className="quiet" onClick={onRestart}>
              Sign in again
            </button>
          )}
        </>
      ) : (
        <form onSubmit={submit}>
          <SetupSecret setup={begin.data} />
          <label>
            Code from your authenticator app
            <input autoComplete="one-time-code" inputMode="numeric" required value={code} onChange={(event) => setCode(event.target.value)} />
          </label>
          <ErrorLine error={confirm.isError ? problemOf(confirm.error).message : undefined} />
          <button type="submit" disabled={confirm.isPending}>
            Turn on and sign in
          </button>
        </form>
      )}
    </main>
  );
}
