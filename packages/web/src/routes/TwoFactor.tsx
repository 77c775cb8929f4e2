import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { CopyButton, ErrorLine, Field } from "../components/ui.js";
import { problemOf, trpc } from "../trpc.js";

/** A new authenticator secret: the key to type, and the otpauth:// address an app opens. Shown this once. */
export function SetupSecret({ setup }: { setup: { secret: string; uri: string } }) {
  return (
    <>
      <p>Add this key to your authenticator app (Google Authenticator, 1Password, Authy…), then type the code it shows.</p>
      <div className="secret">
        <code data-testid="totp-secret">{setup.secret}</code>
        <CopyButton text={setup.secret} label="Copy key" />
      </div>
      <p className="muted">
        Or open <a href={setup.uri}>this otpauth:// link</a> on the device that has the app.
      </p>
    </>
  );
}

/** Recovery codes, shown once: each signs in once without the app. */
export function RecoveryCodes({ codes }: { codes: string[] }) {
  return (
    <>
      <p className="warning" role="status">
        Save these recovery codes now. <strong>You will not see them again.</strong> Each one signs you in once if you lose your authenticator.
      </p>
      <div className="secret">
        <ul className="codes" data-testid="recovery-codes">
          {codes.map((code) => (
            <li key={code}>
              <code>{code}</code>
            </li>
          ))}
        </ul>
        <CopyButton text={codes.join("\n")} label="Copy codes" />
      </div>
    </>
  );
}

/** The account's two-factor sign-in: set up, recovery codes renewed, or turned off with the password. */
export function TwoFactorSection() {
  const queryClient = useQueryClient();
  const status = useQuery({ queryKey: ["two-factor"], queryFn: () => trpc.session.twoFactor.query() });
  const refresh = () => queryClient.invalidateQueries({ queryKey: ["two-factor"] });
  const begin = useMutation({ mutationFn: () => trpc.session.twoFactorBegin.mutate() });
  const [code, setCode] = useState("");
  const confirm = useMutation({ mutationFn: () => trpc.session.twoFactorConfirm.mutate({ code }), onSuccess: refresh });
  const renew = useMutation({ mutationFn: () => trpc.session.recoveryCodes.mutate(), onSuccess: refresh });
  const [password, setPassword] = useState("");
  const disable = useMutation({ mutationFn: () => trpc.session.twoFactorDisable.mutate({ password }), onSuccess: refresh });
  const codes = confirm.data?.recovery_codes ?? renew.data?.recovery_codes;
  const submitCode = (event: FormEvent) => {
    event.preventDefault();
    confirm.mutate();
  };
  const submitDisable = (event: FormEvent) => {
    event.preventDefault();
    disable.mutate();
  };
  const data = status.data;
  return (
    <>
      <h2>Two-factor sign-in</h2>
      {status.isError && <ErrorLine error={problemOf(status.error).message} />}
      {data && data.required_by.length > 0 && <p className="muted">Required by {data.required_by.join(", ")}.</p>}
      {codes && <RecoveryCodes codes={codes} />}
      {data?.enabled ? (
        <>
          <p>
            On: each sign-in asks for a code from your authenticator app. {data.recovery_codes_left} recovery code{data.recovery_codes_left === 1 ? "" : "s"} left.
          </p>
          <div className="actions">
            <button type="button" className="quiet" onClick={() => renew.mutate()} disabled={renew.isPending}>
              New recovery codes
            </button>
          </div>
          <form className="filters" onSubmit={submitDisable}>
            <Field label="Password, to turn it off" error={disable.isError ? problemOf(disable.error).message : undefined}>
              <input type="password" autoComplete="current-password" required value={password} onChange={(event) => setPassword(event.target.value)} />
            </Field>
            <button type="submit" className="danger quiet" disabled={disable.isPending}>
              Turn off
            </button>
          </form>
        </>
      ) : data && !begin.data ? (
        <>
          <p>Off: your password alone signs in.</p>
          <button type="button" onClick={() => begin.mutate()} disabled={begin.isPending}>
            Set up two-factor sign-in
          </button>
        </>
      ) : begin.data ? (
        <form onSubmit={submitCode}>
          <SetupSecret setup={begin.data} />
          <Field label="Code from your authenticator app" error={confirm.isError ? problemOf(confirm.error).message : undefined}>
            <input autoComplete="one-time-code" inputMode="numeric" required value={code} onChange={(event) => setCode(event.target.value)} />
          </Field>
          <button type="submit" disabled={confirm.isPending}>
            Turn on
          </button>
        </form>
      ) : null}
    </>
  );
}
