// The flags a build's service is started with, as its `pnpm start` gives them (`src/bin/node-flags.ts`); a build
// older than that module gets its semi-spaces alone, as its own `pnpm start` gave them.
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

/** `database`: "postgres" or "embedded". */
export async function nodeFlagsOf(checkout, database) {
  const module = path.resolve(checkout, "packages/server/dist/node-flags.js");
  if (!fs.existsSync(module)) return [`--max-semi-space-size=${database === "postgres" ? 16 : 4}`];
  return (await import(pathToFileURL(module).href)).nodeFlags(database);
}
