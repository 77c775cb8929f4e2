import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent, type ReactNode } from "react";
import { CopyButton, Dialog, ErrorLine, Field, FormProblem, Time, usePageTitle, RenameButton } from "../components/ui.js";
import { problemOf, trpc } from "../trpc.js";

type Created = Awaited<ReturnType<typeof trpc.keys.create.mutate>>;
type Key = Awaited<ReturnType<typeof trpc.keys.list.query>>[number];

/** Ready-to-run calls with a new key, against one of the team's stores. */
function snippets(key: string, storeId: number) {
  const base = window.location.origin;
  const curl = [
    `curl -i -X POST ${base}/api/v1/stores/${storeId}/customers \\`,
    `  -H "Authorization: Bearer ${key}" -H "Content-Type: application/json" \\`,
    `  -d '{"external_id":"first-customer","phone":"+12025550143","first_name":"Ada"}'`,
  ].join("\n");
  const sdk = [
    `import { CommerceIngestClient } from "@commerce-ingest/sdk";`,
    ``,
    `const client = new CommerceIngestClient({ apiKey: process.env.COMMERCE_INGEST_API_KEY, baseUrl: "${base}" });`,
    `const { created } = await client.store(${storeId}).customers.upsert({ external_id: "first-customer", phone: "+12025550143" });`,
  ].join("\n");
  return { curl, sdk };
}

/** A key's value, shown this once, with a way to copy it and the warning that it cannot be shown again. */
function ShownOnce({ value, testId, children }: { value: string; testId: string; children: ReactNode }) {
  return (
    <>
      <p className="warning" role="status">
        Copy this key now. {children}
      </p>
      <div className="secret">
        <code data-testid={testId}>{value}</code>
        <CopyButton text={value} />
      </div>
    </>
  );
}

function NewKeyDialog({ stores, onClose }: { stores: Array<{ id: number; name: string }>; onClose: () => void }) {
  const queryClient = useQueryClient();
  const [name, setName] = useState("");
  const [storeId, setStoreId] = useState("");
  const create = useMutation({
    mutationFn: () => trpc.keys.create.mutate({ name, store_id: storeId ? Number(storeId) : null }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ["keys"] }),
  });
  const problem = create.isError ? problemOf(create.error) : undefined;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate();
  };
  const created: Created | undefined = create.data;
  if (created) {
    const storeForSnippet = created.store_id ?? stores[0]?.id;
    const code = storeForSnippet === undefined ? undefined : snippets(created.key, storeForSnippet);
    return (
      <Dialog title="Your new API key" onClose={onClose}>
        <ShownOnce value={created.key} testId="new-key-value">
          <strong>You will not see it again:</strong> only its last four characters are kept.
        </ShownOnce>
        <p className="muted">Keep it on your servers only, never in a browser or app your customers use. A leaked key: delete it and create another.</p>
        {code && (
          <>
            <h3>Try it (store {storeForSnippet})</h3>
            <pre>{code.curl}</pre>
            <CopyButton text={code.curl} label="Copy curl" />
            <h3>With the SDK</h3>
            <pre>{code.sdk}</pre>
            <CopyButton text={code.sdk} label="Copy SDK call" />
          </>
        )}
        <div className="actions">
          <button type="button" onClick={onClose}>
            Done
          </button>
        </div>
      </Dialog>
    );
  }
  return (
    <Dialog title="Add API key" onClose={onClose}>
      <form onSubmit={submit}>
        <Field label="Name" error={problem?.fields.name}>
          <input required maxLength={255} value={name} placeholder="e.g. shop backend" onChange={(event) => setName(event.target.value)} />
        </Field>
        <Field label="Works for" error={problem?.fields.store_id}>
          <select value={storeId} onChange={(event) => setStoreId(event.target.value)}>
            <option value="">Every store of the team</option>
            {stores.map((store) => (
              <option key={store.id} value={store.id}>
                Only store {store.id} ({store.name})
              </option>
            ))}
          </select>
        </Field>
        <FormProblem problem={problem} fields={["name", "store_id"]} />
        <div className="actions">
          <button type="button" className="quiet" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" disabled={create.isPending}>
            Create key
          </button>
        </div>
      </form>
    </Dialog>
  );
}

const OVERLAPS = [
  { seconds: 0, label: "Stop the old key now" },
  { seconds: 3600, label: "Keep the old key working 1 hour" },
  { seconds: 24 * 3600, label: "Keep the old key working 24 hours" },
  { seconds: 7 * 24 * 3600, label: "Keep the old key working 7 days" },
];

/** A new key in place of this one; the old one works for the overlap chosen, then is refused. */
function RollKeyDialog({ apiKey, onClose }: { apiKey: Key; onClose: () => void }) {
  const queryClient = useQueryClient();
  const [overlap, setOverlap] = useState(String(24 * 3600));
  const roll = useMutation({
    mutationFn: () => trpc.keys.roll.mutate({ id: apiKey.id, overlap_seconds: Number(overlap) }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ["keys"] }),
  });
  const problem = roll.isError ? problemOf(roll.error) : undefined;
  if (roll.data) {
    return (
      <Dialog title={`New key for “${apiKey.name}”`} onClose={onClose}>
        <ShownOnce value={roll.data.key.key} testId="rolled-key-value">
          <strong>You will not see it again.</strong> The old key (…{apiKey.last4}) works until <Time value={roll.data.previous_expires_at} />.
        </ShownOnce>
        <div className="actions">
          <button type="button" onClick={onClose}>
            Done
          </button>
        </div>
      </Dialog>
    );
  }
  return (
    <Dialog title={`Roll key “${apiKey.name}”?`} onClose={onClose}>
      <p>A new key takes its place, with the same name and stores. Deploy the new key, then let the old one (…{apiKey.last4}) end.</p>
      <Field label="The old key" error={problem?.fields.overlap_seconds}>
        <select value={overlap} onChange={(event) => setOverlap(event.target.value)}>
          {OVERLAPS.map((choice) => (
            <option key={choice.seconds} value={choice.seconds}>
              {choice.label}
            </option>
          ))}
        </select>
      </Field>
      <FormProblem problem={problem} fields={["overlap_seconds"]} />
      <div className="actions">
        <button type="button" className="quiet" onClick={onClose}>
          Cancel
        </button>
        <button type="button" onClick={() => roll.mutate()} disabled={roll.isPending}>
          Roll key
        </button>
      </div>
    </Dialog>
  );
}

function DeleteKeyDialog({ apiKey, onClose }: { apiKey: Key; onClose: () => void }) {
  const queryClient = useQueryClient();
  const remove = useMutation({
    mutationFn: () => trpc.keys.delete.mutate({ id: apiKey.id }),
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: ["keys"] });
      onClose();
    },
  });
  return (
    <Dialog title={`Delete key “${apiKey.name}”?`} onClose={onClose}>
      <p>
        Requests with the key ending in <code>{apiKey.last4}</code> are refused from the very next one, on every server. This cannot be undone.
      </p>
      <ErrorLine error={remove.isError ? problemOf(remove.error).message : undefined} />
      <div className="actions">
        <button type="button" className="quiet" onClick={onClose}>
          Cancel
        </button>
        <button type="button" className="danger" onClick={() => remove.mutate()} disabled={remove.isPending}>
          Delete key
        </button>
      </div>
    </Dialog>
  );
}

export function ApiKeys() {
  usePageTitle("API keys");
  const keys = useQuery({ queryKey: ["keys"], queryFn: () => trpc.keys.list.query() });
  const stores = useQuery({ queryKey: ["stores"], queryFn: () => trpc.stores.list.query() });
  const [adding, setAdding] = useState(false);
  const [deleting, setDeleting] = useState<Key>();
  const [rolling, setRolling] = useState<Key>();
  const queryClient = useQueryClient();
  const rename = useMutation({
    mutationFn: (input: { id: number; name: string }) => trpc.keys.rename.mutate(input),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ["keys"] }),
  });
  return (
    <section>
      <div className="title">
        <h1>API Keys</h1>
        <button type="button" onClick={() => setAdding(true)}>
          Add key
        </button>
      </div>
      <p className="muted">
        Every request to the API carries one: <code>Authorization: Bearer &lt;key&gt;</code>. A key works for every store of the team, or for the one
        store it is restricted to.
      </p>
      {keys.isError && <ErrorLine error={problemOf(keys.error).message} />}
      {keys.data && keys.data.length === 0 && <p>No keys yet. Add one to start pushing data.</p>}
      {keys.data && keys.data.length > 0 && (
        <table tabIndex={0}>
          <thead>
            <tr>
              <th>Name</th>
              <th>Key</th>
              <th>Works for</th>
              <th>Created</th>
              <th>Last used</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {keys.data.map((key) => (
              <tr key={key.id}>
                <td>{key.name}</td>
                <td>
                  <code>…{key.last4}</code>
                  {key.expires_at && (
                    <div className="muted">
                      rolled: works until <Time value={key.expires_at} />
                    </div>
                  )}
                </td>
                <td>{key.store ? `store ${key.store.id} (${key.store.name})` : "every store"}</td>
                <td>
                  <Time value={key.created_at} /> <span className="muted">by {key.created_by ?? "an operator"}</span>
                </td>
                <td>
                  <Time value={key.last_used_at} />
                </td>
                <td>
                  <RenameButton label={`Rename ${key.name}`} what={`key ${key.name} (…${key.last4})`} current={key.name} onRename={(name) => rename.mutate({ id: key.id, name })} />{" "}
                  {!key.expires_at && (
                    <>
                      <button type="button" className="quiet" onClick={() => setRolling(key)} aria-label={`Roll ${key.name}`}>
                        Roll
                      </button>{" "}
                    </>
                  )}
                  <button type="button" className="danger quiet" onClick={() => setDeleting(key)} aria-label={`Delete ${key.name}`}>
                    Delete
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {adding && <NewKeyDialog stores={stores.data ?? []} onClose={() => setAdding(false)} />}
      {deleting && <DeleteKeyDialog apiKey={deleting} onClose={() => setDeleting(undefined)} />}
      {rolling && <RollKeyDialog apiKey={rolling} onClose={() => setRolling(undefined)} />}
      <ErrorLine error={rename.isError ? problemOf(rename.error).message : undefined} />
    </section>
  );
}
