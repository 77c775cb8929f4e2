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
const tsx = path.join(here, "node_modules", "tsx", "dist", "cli.mjs");
const result = spawnSync(process.execPath, [tsx, path.join(here, "src", `${name}.ts`), ...args], { stdio: "inherit" });
process.exit(result.status ?? 1);
