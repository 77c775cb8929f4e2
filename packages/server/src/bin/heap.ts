import v8 from "node:v8";

/**
 * How far V8 lets the old generation grow past what is live before it
 * collects again, by database. On PostgreSQL: by three quarters, so major
 * collections come less often than by V8's own rule (under the order push,
 * twice what is live made about a tenth more pushes a second than V8's rule;
 * three quarters, paired against twice, 0.99x order pushes and 1.01x
 * customer pushes, for peaks 13 MB lower under pushes and batches and 24 MB
 * lower under an import of customers, see `docs/performance.md`). On the
 * embedded database: by a quarter, because PGlite's memory (about 140 MB)
 * shares the process and a heap kept near what is live holds it under 300 MB.
 * A `--heap-growing-percent` on node's command line wins (not one in
 * NODE_OPTIONS, which node does not list among its arguments). The young generation's size
 * can only be set when node starts: see `node-flags.ts`.
 */
export function tuneHeap(database: "postgres" | "embedded"): void {
  if (process.execArgv.some((arg) => /^--heap[-_]growing[-_]percent\b/.test(arg))) return;
  v8.setFlagsFromString(`--heap-growing-percent=${database === "postgres" ? 75 : 25}`);
}
