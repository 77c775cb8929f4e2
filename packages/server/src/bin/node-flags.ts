import { pathToFileURL } from "node:url";

/**
 * How node is started for the service, as only its command line and its
 * environment can set it; `pnpm start`, `pnpm worker` and the benches take it
 * from here. `node dist/node-flags.js postgres` prints the command's start for
 * PostgreSQL (`node --…`), and with no argument for the embedded database
 * (`env GLIBC_TUNABLES=… node --…`; the scripts pass `postgres` when
 * `DATABASE_URL` is set); `--flags` prints node's flags alone, for
 * NODE_OPTIONS.
 *
 * - A young generation of 16 MB semi-spaces on PostgreSQL, where the collector
 *   then takes a third less of an import's CPU; 4 MB on the embedded database,
 *   whose process PGlite's memory already fills (8 MB made it 10 MB larger).
 * - One V8 background thread (the garbage collector's helper, the optimizing
 *   compiler) instead of node's four, each with a malloc arena of its own. On
 *   the embedded database, under order pushes, the process's peak resident
 *   size went from 284-298 MB to 244-255 MB and its pushes were a tenth
 *   faster in paired runs; on PostgreSQL, an import of 1,000,000 orders and
 *   then 1,000,000 customers peaked at 231-238 MB instead of 240-245, for the
 *   same CPU per imported order and pushes 1.03x (see `docs/performance.md`).
 */
export function nodeFlags(database: "postgres" | "embedded"): string[] {
  return [`--max-semi-space-size=${database === "postgres" ? 16 : 4}`, "--v8-pool-size=1"];
}

/**
 * On the embedded database, glibc's malloc with its mmap threshold fixed at
 * its starting 128 KiB. By default each large block freed raises the
 * threshold (up to 32 MB), and the compilers' and buffers' large blocks then
 * come from malloc's heaps, which keep what they free: under order pushes,
 * peaks of 222-233 MB in five runs instead of 250-252 in seven of nine,
 * pushes 1.03x in paired runs. On PostgreSQL, whose process is well under its
 * bound, nothing: customer pushes read 0.88x there in paired runs. Other C
 * libraries ignore the variable.
 */
export function nodeEnvironment(database: "postgres" | "embedded"): Record<string, string> {
  return database === "embedded" ? { GLIBC_TUNABLES: "glibc.malloc.mmap_threshold=131072" } : {};
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const args = process.argv.slice(2);
  const database = args.includes("postgres") ? "postgres" : "embedded";
  const flags = nodeFlags(database);
  if (args.includes("--flags")) console.log(flags.join(" "));
  else {
    // The command's start, for a shell to split on spaces (no value here holds one).
    const env = Object.entries(nodeEnvironment(database)).map(([name, value]) => `${name}=${value}`);
    console.log([...(env.length > 0 ? ["env", ...env] : []), "node", ...flags].join(" "));
  }
}
