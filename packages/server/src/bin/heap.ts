import v8 from "node:v8";

/**
 * How far V8 lets the old generation grow past what is live before it
 * collects again, by database. On PostgreSQL: to twice what is live, so major
 * collections come half as often (measured under the order push: about a
 * tenth more pushes a second and a lower p99, at about 150 MB). On the
 * embedded database: by a quarter, because PGlite's memory (about 140 MB)
 * shares the process and a heap kept near what is live holds it under 300 MB.
 * A `--heap-growing-percent` on node's command line wins (not one in
 * NODE_OPTIONS, which node does not list among its arguments). The young generation's size
 * can only be set when node starts: see `node-flags.ts`.
 */
export function tuneHeap(database: "postgres" | "embedded"): void {
  if (process.execArgv.some((arg) => /^--heap[-_]growing[-_]percent\b/.test(arg))) return;
  v8.setFlagsFromString(`--heap-growing-percent=${database === "postgres" ? 100 : 25}`);
}
