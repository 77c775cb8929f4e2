/** What this process's gathering of pushes came to, for /metrics: writes made, those that carried one push, and the pushes all carried. */
export const gathered = { writes: 0, alone: 0, pushes: 0 };
