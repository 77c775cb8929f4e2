// `pnpm example <name>`: runs examples/src/<name>.ts against the service.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const available = fs
  .readdirSync(path.join(here, "src"))
  .filter((file) => file.endsWith(".ts") && !file.startsWith("_"))
  .map((file) => file.slice(0, -3))
  .sort();
const [name, ...args] = process.argv.slice(2);
if (!name || !available.includes(name)) {
  console.error(`${name ? `No example "${name}". ` : ""}Usage: pnpm example <name>\n\nExamples:\n${available.map((n) => `  ${n}`).join("\n")}`);
  process.exit(2);
}
// The SDK the examples import is built once: again only when its sources (or the shared schemas it is built
// from) changed since, so that an example runs in seconds rather than after a build of the workspace.
const root = path.resolve(here, "..");
const newest = (dir) =>
  fs.existsSync(dir)
    ? Math.max(0, ...fs.readdirSync(dir, { recursive: true }).map((file) => fs.statSync(path.join(dir, String(file))).mtimeMs))
    : 0;
const built = path.join(root, "packages", "sdk", "dist", "index.js");
const sources = Math.max(newest(path.join(root, "packages", "sdk", "src")), newest(path.join(root, "packages", "shared", "src")));
if (!fs.existsSync(built) || fs.statSync(built).mtimeMs < sources) {
  console.error("Building the SDK first...");
  const build = spawnSync("pnpm", ["turbo", "run", "build", "--filter=@commerce-ingest/sdk...", "--output-logs=errors-only"], { cwd: root, stdio: ["ignore", "ignore", "inherit"] });
  if (build.status !== 0) process.exit(build.status ?? 1);
}
const tsx = path.join(here, "node_modules", "tsx", "dist", "cli.mjs");
const result = spawnSync(process.execPath, [tsx, path.join(here, "src", `${name}.ts`), ...args], { stdio: "inherit" });
process.exit(result.status ?? 1);
