import { pathToFileURL } from "node:url";

/**
 * What node is started with for the service, as only its command line (or
 * NODE_OPTIONS) can set it; `pnpm start`, `pnpm worker` and the benches take it
 * from here. `node dist/node-flags.js postgres` prints it for PostgreSQL, and
 * with no argument for the embedded database (the scripts pass `postgres` when
 * `DATABASE_URL` is set).
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

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log(nodeFlags(process.argv[2] === "postgres" ? "postgres" : "embedded").join(" "));
}
