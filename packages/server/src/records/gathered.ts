/**
 * What this process's gathering of pushes came to, for /metrics: writes made,
 * those that carried one push, the pushes all carried, and the pushes waiting
 * now for a write of their store to end.
 */
export const gathered = { writes: 0, alone: 0, pushes: 0, waiting: 0 };
