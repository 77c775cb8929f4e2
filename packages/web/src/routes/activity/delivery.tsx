import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { ConfirmButton, CopyButton, Dialog, ErrorLine, Field, Time } from "../../components/ui.js";
import { problemOf, trpc } from "../../trpc.js";

const OVERLAPS = [
  { hours: 0, label: "Stop signing with the old secret now" },
  { hours: 1, label: "Sign with both for 1 hour" },
  { hours: 24, label: "Sign with both for 24 hours" },
  { hours: 168, label: "Sign with both for 7 days" },
];

/** A signing secret, shown this once. */
function SecretOnce({ secret, children }: { secret: string; children: string }) {
  return (
    <>
      <p className="warning" role="status">
        Copy this signing secret now. <strong>You will not see it again.</strong> {children}
      </p>
      <div className="secret">
        <code data-testid="endpoint-secret">{secret}</code>
        <CopyButton text={secret} />
      </div>
    </>
  );
}

/** Where the store's messages go: its own endpoint (set, tested, its secret rolled), and the latest deliveries. */
export function Delivery({ storeId }: { storeId: number }) {
  const queryClient = useQueryClient();
  const endpoint = useQuery({ queryKey: ["endpoint", storeId], queryFn: () => trpc.endpoint.get.query({ store_id: storeId }) });
  const deliveries = useQuery({ queryKey: ["deliveries", storeId], queryFn: () => trpc.endpoint.deliveries.query({ store_id: storeId }), refetchInterval: 3000 });
  const refresh = () => Promise.all([queryClient.invalidateQueries({ queryKey: ["endpoint", storeId] }), queryClient.invalidateQueries({ queryKey: ["deliveries", storeId] })]);
  const [url, setUrl] = useState("");
  const set = useMutation({ mutationFn: () => trpc.endpoint.set.mutate({ store_id: storeId, url }), onSuccess: refresh });
  const test = useMutation({ mutationFn: () => trpc.endpoint.test.mutate({ store_id: storeId }), onSuccess: refresh });
  const remove = useMutation({ mutationFn: () => trpc.endpoint.remove.mutate({ store_id: storeId }), onSuccess: refresh });
  const [rolling, setRolling] = useState(false);
  const current = endpoint.data;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    set.mutate();
  };
  return (
    <>
      <h2>Endpoint</h2>
      {endpoint.isError && <ErrorLine error={problemOf(endpoint.error).message} />}
      {current === null && <p>This store's messages go to the service's default. Set an endpoint to receive them yourself, signed with a secret of the store's own.</p>}
      {current && (
        <p>
          Messages go to <code className="path">{current.url}</code>
          {current.previous_valid_until && (
            <>
              {" "}
              (the previous secret is still accepted until <Time value={current.previous_valid_until} />)
            </>
          )}
          .
        </p>
      )}
      <form className="filters" onSubmit={submit}>
        <Field label={current ? "New URL" : "Endpoint URL"} error={set.isError ? problemOf(set.error).message : undefined}>
          <input type="url" required value={url} placeholder="https://example.com/hooks/messages" onChange={(event) => setUrl(event.target.value)} />
        </Field>
        <button type="submit" disabled={set.isPending || url.trim() === ""}>
          {current ? "Change URL" : "Set endpoint"}
        </button>
      </form>
      {set.data?.secret && <SecretOnce secret={set.data.secret}>Your receiver checks each delivery's X-Signature with it (the SDK's verifyWebhook).</SecretOnce>}
      {current && (
        <div className="actions">
          <button type="button" onClick={() => test.mutate()} disabled={test.isPending}>
            Send test event
          </button>
          <button type="button" className="quiet" onClick={() => setRolling(true)}>
            Roll secret
          </button>
          <ConfirmButton className="quiet danger" confirm="Remove endpoint" question="Remove this endpoint? The store's messages go to the service's default again." onConfirm={() => remove.mutate()}>
            Remove
          </ConfirmButton>
        </div>
      )}
      {test.data && (
        <p role="status" data-testid="test-answer">
          Test event: {test.data.status === null ? `no answer (${test.data.error})` : `answered ${test.data.status}`}
          {test.data.answer ? <> · “{test.data.answer}”</> : null} in {test.data.duration_ms} ms.
        </p>
      )}
      {test.isError && <ErrorLine error={problemOf(test.error).message} />}
      {remove.isError && <ErrorLine error={problemOf(remove.error).message} />}
      {rolling && <RollSecretDialog storeId={storeId} onClose={() => setRolling(false)} onRolled={refresh} />}
      <h2>Recent deliveries</h2>
      <table tabIndex={0} className="requests">
        <thead>
          <tr>
            <th>Time</th>
            <th>Answer</th>
            <th>What</th>
            <th>Endpoint said</th>
            <th className="wide">ms</th>
          </tr>
        </thead>
        <tbody>
          {deliveries.data?.map((delivery) => (
            <tr key={delivery.id}>
              <td>
                <Time value={delivery.at} />
              </td>
              <td>{delivery.status === null ? <span className="badge s5">none</span> : <span className={`badge s${String(delivery.status)[0]}`}>{delivery.status}</span>}</td>
              <td>{delivery.message_id ? <code>{delivery.message_id.slice(0, 8)}</code> : "test event"}</td>
              <td className="answer">{delivery.error ?? delivery.answer}</td>
              <td className="wide">{delivery.duration_ms}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {deliveries.data?.length === 0 && <p className="muted">Nothing delivered to an endpoint yet.</p>}
    </>
  );
}

function RollSecretDialog({ storeId, onClose, onRolled }: { storeId: number; onClose: () => void; onRolled: () => unknown }) {
  const [hours, setHours] = useState("24");
  const roll = useMutation({ mutationFn: () => trpc.endpoint.rollSecret.mutate({ store_id: storeId, overlap_hours: Number(hours) }), onSuccess: onRolled });
  if (roll.data) {
    return (
      <Dialog title="New signing secret" onClose={onClose}>
        <SecretOnce secret={roll.data.secret}>{Number(hours) > 0 ? "Deliveries are signed with both secrets until the overlap ends." : "The old secret signs nothing more."}</SecretOnce>
        <div className="actions">
          <button type="button" onClick={onClose}>
            Done
          </button>
        </div>
      </Dialog>
    );
  }
  return (
    <Dialog title="Roll the signing secret?" onClose={onClose}>
      <p>A new secret signs every delivery from now on. Give it to your receiver, then let the old one end.</p>
      <Field label="The old secret" error={roll.isError ? problemOf(roll.error).message : undefined}>
        <select value={hours} onChange={(event) => setHours(event.target.value)}>
          {OVERLAPS.map((choice) => (
            <option key={choice.hours} value={choice.hours}>
              {choice.label}
            </option>
          ))}
        </select>
      </Field>
      <div className="actions">
        <button type="button" className="quiet" onClick={onClose}>
          Cancel
        </button>
        <button type="button" onClick={() => roll.mutate()} disabled={roll.isPending}>
          Roll secret
        </button>
      </div>
    </Dialog>
  );
}
