import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { Link } from "react-router";
import { ErrorLine, Field, FormProblem, usePageTitle, ConfirmButton, RenameButton } from "../components/ui.js";
import { problemOf, trpc } from "../trpc.js";

type Store = Awaited<ReturnType<typeof trpc.stores.list.query>>[number];

function StoreRow({ store }: { store: Store }) {
  const queryClient = useQueryClient();
  const [country, setCountry] = useState(store.country ?? "");
  const [delayMinutes, setDelayMinutes] = useState(String(store.recovery_delay_seconds / 60));
  const [logBodies, setLogBodies] = useState(store.log_bodies);
  const save = useMutation({
    mutationFn: (patch: { name?: string; country?: string | null; recovery_delay_seconds?: number; paused?: boolean; log_bodies?: boolean }) => trpc.stores.update.mutate({ id: store.id, ...patch }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ["stores"] }),
  });
  const problem = save.isError ? problemOf(save.error) : undefined;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    save.mutate({ country: country.trim() === "" ? null : country.trim(), recovery_delay_seconds: Math.round(Number(delayMinutes) * 60), log_bodies: logBodies });
  };
  return (
    <tr>
      <td>
        <strong className="store-id">{store.id}</strong>
      </td>
      <td>
        {store.name}{" "}
        <RenameButton label={`Rename store ${store.id}`} what={`store ${store.id}`} current={store.name} onRename={(name) => save.mutate({ name })} />
      </td>
      <td colSpan={2}>
        <form className="inline" onSubmit={submit} aria-label={`Settings of store ${store.id}`}>
          <Field label="Phone country" error={problem?.fields.country}>
            <input value={country} maxLength={2} size={3} placeholder="none" onChange={(event) => setCountry(event.target.value)} />
          </Field>
          <Field label="Recovery delay (minutes)" error={problem?.fields.recovery_delay_seconds}>
            <input type="number" min={0} step="any" value={delayMinutes} onChange={(event) => setDelayMinutes(event.target.value)} />
          </Field>
          <label className="check">
            <input type="checkbox" checked={logBodies} onChange={(event) => setLogBodies(event.target.checked)} /> Keep call bodies
          </label>
          <button type="submit" disabled={save.isPending}>
            Save
          </button>
        </form>
        <FormProblem problem={problem} fields={["country", "recovery_delay_seconds"]} />
      </td>
      <td>
        {store.paused ? <span className="badge paused">paused</span> : <span className="badge">active</span>}{" "}
        {store.paused ? (
          <button type="button" className="quiet" onClick={() => save.mutate({ paused: false })} disabled={save.isPending}>
            Resume
          </button>
        ) : (
          <ConfirmButton
            label={`Pause store ${store.id}`}
            className="danger quiet"
            disabled={save.isPending}
            confirm="Pause the store"
            question={`While ${store.name} is paused, every push to it is answered 404 and its automations wait. Resume it to take pushes again.`}
            onConfirm={() => save.mutate({ paused: true })}
          >
            Pause
          </ConfirmButton>
        )}
      </td>
      <td>
        <Link to={`/stores/${store.id}/activity`}>Activity</Link>
      </td>
    </tr>
  );
}

function AddStore() {
  const queryClient = useQueryClient();
  const [name, setName] = useState("");
  const [country, setCountry] = useState("");
  const create = useMutation({
    mutationFn: () => trpc.stores.create.mutate({ name: name.trim(), country: country.trim() === "" ? null : country.trim().toUpperCase() }),
    onSuccess: () => {
      setName("");
      setCountry("");
      return queryClient.invalidateQueries({ queryKey: ["stores"] });
    },
  });
  const problem = create.isError ? problemOf(create.error) : undefined;
  return (
    <>
      <h2>Add a store</h2>
      <form
        className="inline"
        onSubmit={(event: FormEvent) => {
          event.preventDefault();
          create.mutate();
        }}
      >
        <Field label="Name" error={problem?.fields.name}>
          <input required maxLength={255} value={name} onChange={(event) => setName(event.target.value)} />
        </Field>
        <Field label="Phone country" error={problem?.fields.country}>
          <input value={country} maxLength={2} size={3} placeholder="US" onChange={(event) => setCountry(event.target.value)} />
        </Field>
        <button type="submit" disabled={create.isPending}>
          Add store
        </button>
      </form>
      <FormProblem problem={problem} fields={["name", "country"]} />
    </>
  );
}

export function Stores() {
  usePageTitle("Stores");
  const stores = useQuery({ queryKey: ["stores"], queryFn: () => trpc.stores.list.query() });
  return (
    <section>
      <h1>Stores</h1>
      <p className="muted">
        The store id is the number every API path needs: <code>/api/v1/stores/&lt;id&gt;/orders</code>. Phones without <code>+</code> are read in the
        store's country. A paused store refuses pushes (404) and holds its automations.
      </p>
      {stores.isError && <ErrorLine error={problemOf(stores.error).message} />}
      {stores.data && (
        <table tabIndex={0}>
          <thead>
            <tr>
              <th>Store id</th>
              <th>Name</th>
              <th colSpan={2}>Settings</th>
              <th>State</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {stores.data.map((store) => (
              <StoreRow key={`${store.id}:${store.country ?? ""}:${store.recovery_delay_seconds}`} store={store} />
            ))}
          </tbody>
        </table>
      )}
      {stores.data?.length === 0 && <p className="muted">No stores yet: add the first one below.</p>}
      <AddStore />
    </section>
  );
}
