/**
 * Changes to who may push where, said inside this process the moment the
 * change is written: caches here forget at once. Each listener may also return
 * a promise, resolved once the database's notification (which tells the other
 * processes) has come back: the change is answered only then, so the caller's
 * next request finds every process told.
 */
type Listener = () => Promise<void>;
const listeners = new Set<Listener>();

export function onAccessChange(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export async function accessChanged(): Promise<void> {
  await Promise.all([...listeners].map((listener) => listener()));
}
