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
