import { readdirSync } from "node:fs";
import { defineConfig } from "tsup";

const MIGRATIONS = "../server/src/db/migrations";

/**
 * The service's code is bundled in (it is not published on its own); its libraries are this
 * package's dependencies. The migrator reads `migrations/` beside the chunk that holds it, so
 * each migration is built there, as the server's own build does.
 */
const migrations = Object.fromEntries(
  readdirSync(MIGRATIONS)
    .filter((file) => file.endsWith(".ts") && !file.includes(".test."))
    .map((file) => [`migrations/${file.slice(0, -".ts".length)}`, `${MIGRATIONS}/${file}`]),
);

export default defineConfig([
  {
    entry: { index: "src/index.ts", cli: "src/cli.ts", ...migrations },
    format: ["esm"],
    noExternal: [/^@commerce-ingest\//],
    clean: true,
    sourcemap: false,
    splitting: true,
    target: "node20",
    platform: "node",
  },
  { entry: { index: "src/index.ts" }, format: ["esm"], dts: { only: true }, clean: false },
]);
