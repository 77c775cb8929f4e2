import { cloneElement, useEffect, useId, useRef, useState, type ReactElement, type ReactNode } from "react";

/** A modal dialog (the browser's own), open while mounted. */
export function Dialog({ title, children, onClose }: { title: string; children: ReactNode; onClose: () => void }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const dialog = ref.current;
    if (dialog && !dialog.open) dialog.showModal();
    return () => dialog?.close();
  }, []);
  return (
    <dialog ref={ref} aria-label={title} onCancel={onClose}>
      <h2>{title}</h2>
      {children}
    </dialog>
  );
}

export function CopyButton({ text, label = "Copy" }: { text: string; label?: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <button
      type="button"
      className="quiet"
      onClick={() => {
        void navigator.clipboard?.writeText(text).then(() => setCopied(true), () => setCopied(false));
      }}
    >
      {copied ? "Copied" : label}
    </button>
  );
}

export function ErrorLine({ error }: { error: string | undefined }) {
  return error ? (
    <p className="error" role="alert">
      {error}
    </p>
  ) : null;
}

/**
 * A labelled form field with its own problem, as the server named it, right
 * under it (the control is marked invalid and described by the message).
 */
export function Field({ label, error, children }: { label: string; error: string | undefined; children: ReactElement<Record<string, unknown>> }) {
  const id = useId();
  return (
    <div className="field">
      <label>
        {label}
        {cloneElement(children, error ? { "aria-invalid": true, "aria-describedby": id } : {})}
      </label>
      {error ? (
        <p className="field-error" id={id} role="alert">
          {error}
        </p>
      ) : null}
    </div>
  );
}

/** What a failed form call says beyond its fields' own problems: nothing when every refused field is shown beside itself. */
export function FormProblem({ problem, fields }: { problem: { message: string; fields: Record<string, string> } | undefined; fields: readonly string[] }) {
  if (!problem) return null;
  const shown = Object.keys(problem.fields);
  return <ErrorLine error={shown.length > 0 && shown.every((path) => fields.includes(path)) ? undefined : problem.message} />;
}

/** A timestamp as the reader's clock shows it; the ISO value on hover. */
export function Time({ value }: { value: string | null }) {
  if (!value) return <span className="muted">never</span>;
  return <time dateTime={value} title={value}>{new Date(value).toLocaleString()}</time>;
}

/** The page's own title in the browser's tab and history (each page says what it is). */
export function usePageTitle(title: string): void {
  useEffect(() => {
    document.title = `${title} · Commerce Ingest`;
  }, [title]);
}

/**
 * A button that asks first, in the console's own dialog (never the browser's `confirm`, which a page can
 * suppress and a screen reader announces poorly): what will happen, and a button named for the act.
 */
export function ConfirmButton({
  children,
  label,
  question,
  confirm,
  onConfirm,
  className = "quiet",
  disabled,
  title,
}: {
  children: ReactNode;
  label?: string;
  question: ReactNode;
  confirm: string;
  onConfirm: () => void;
  className?: string;
  disabled?: boolean;
  title?: string;
}) {
  const [open, setOpen] = useState(false);
  return (
    <>
      <button type="button" className={className} aria-label={label} disabled={disabled} title={title} onClick={() => setOpen(true)}>
        {children}
      </button>
      {open && (
        <Dialog title={confirm} onClose={() => setOpen(false)}>
          <p>{question}</p>
          <div className="actions">
            <button type="button" className="quiet" onClick={() => setOpen(false)}>
              Cancel
            </button>
            <button
              type="button"
              className={className.includes("danger") ? "danger" : undefined}
              onClick={() => {
                setOpen(false);
                onConfirm();
              }}
            >
              {confirm}
            </button>
          </div>
        </Dialog>
      )}
    </>
  );
}

/** A Rename button that asks for the new name in the console's own dialog. */
export function RenameButton({ label, what, current, onRename }: { label: string; what: string; current: string; onRename: (name: string) => void }) {
  const [open, setOpen] = useState(false);
  const [name, setName] = useState(current);
  return (
    <>
      <button
        type="button"
        className="quiet"
        aria-label={label}
        onClick={() => {
          setName(current);
          setOpen(true);
        }}
      >
        Rename
      </button>
      {open && (
        <Dialog title={`Rename ${what}`} onClose={() => setOpen(false)}>
          <form
            onSubmit={(event) => {
              event.preventDefault();
              const trimmed = name.trim();
              setOpen(false);
              if (trimmed && trimmed !== current) onRename(trimmed);
            }}
          >
            <Field label="New name" error={undefined}>
              <input required maxLength={255} value={name} onChange={(event) => setName(event.target.value)} />
            </Field>
            <div className="actions">
              <button type="button" className="quiet" onClick={() => setOpen(false)}>
                Cancel
              </button>
              <button type="submit">Rename</button>
            </div>
          </form>
        </Dialog>
      )}
    </>
  );
}
