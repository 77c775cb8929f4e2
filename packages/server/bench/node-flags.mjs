// How a build's service is started, as its `pnpm start` starts it (`src/bin/node-flags.ts`): node's flags and the
// variables node's environment is given besides the service's own. A build older than that module gets its
// semi-spaces alone, and a build whose module sets no environment none, as their own `pnpm start` gave them.
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

/** A bench's own flags after the build's: BENCH_NODE_FLAGS="--cpu-prof --cpu-prof-dir=prof" profiles the service. */
const benchFlags = (process.env.BENCH_NODE_FLAGS ?? "").split(" ").filter(Boolean);

/** `database`: "postgres" or "embedded". Answers `{ flags, env }`, BENCH_NODE_FLAGS among the flags. */
export async function nodeLaunchOf(checkout, database) {
  const module = path.resolve(checkout, "packages/server/dist/node-flags.js");
  if (!fs.existsSync(module)) return { flags: [`--max-semi-space-size=${database === "postgres" ? 16 : 4}`, ...benchFlags], env: {} };
  const launch = await import(pathToFileURL(module).href);
  return { flags: [...launch.nodeFlags(database), ...benchFlags], env: launch.nodeEnvironment?.(database) ?? {} };
}
