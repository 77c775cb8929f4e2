// How a build's service is started, as its `pnpm start` starts it (`src/bin/node-flags.ts`): node's flags and the
// environment node is given. A build older than that module gets its semi-spaces alone, and a build whose module
// sets no environment none, as their own `pnpm start` gave them.
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const moduleOf = (checkout) => path.resolve(checkout, "packages/server/dist/node-flags.js");

/** `database`: "postgres" or "embedded". */
export async function nodeFlagsOf(checkout, database) {
  const module = moduleOf(checkout);
  if (!fs.existsSync(module)) return [`--max-semi-space-size=${database === "postgres" ? 16 : 4}`];
  return (await import(pathToFileURL(module).href)).nodeFlags(database);
}

/** The variables node's environment is given (`GLIBC_TUNABLES`), besides the service's own; `database` as above. */
export async function nodeEnvOf(checkout, database) {
  const module = moduleOf(checkout);
  if (!fs.existsSync(module)) return {};
  return (await import(pathToFileURL(module).href)).nodeEnvironment?.(database) ?? {};
}
