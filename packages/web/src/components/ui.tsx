import { useEffect, useRef, useState, type ReactNode } from "react";

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

/** A timestamp as the reader's clock shows it; the ISO value on hover. */
export function Time({ value }: { value: string | null }) {
  if (!value) return <span className="muted">never</span>;
  return <time dateTime={value} title={value}>{new Date(value).toLocaleString()}</time>;
}
