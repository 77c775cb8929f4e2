import { readdirSync } from "node:fs";
import { defineConfig } from "tsup";

/** Each migration is built to `dist/migrations`, where the migrator reads the folder (see `db/migrate.ts`). */
const migrations = Object.fromEntries(
  readdirSync("src/db/migrations")
    .filter((file) => file.endsWith(".ts") && !file.includes(".test."))
    .map((file) => [`migrations/${file.slice(0, -".ts".length)}`, `src/db/migrations/${file}`]),
);

export default defineConfig({
  // Each entry point lives in src/bin; the built file names are what `pnpm start`, `worker`, `migrate` and `admin` run
  // (`node-flags` prints the flags node is started with).
  entry: { main: "src/bin/main.ts", worker: "src/bin/worker.ts", migrate: "src/bin/migrate.ts", admin: "src/bin/admin.ts", "node-flags": "src/bin/node-flags.ts", ...migrations },
  format: ["esm"],
  clean: true,
  sourcemap: true,
  target: "node20",
  splitting: true,
});
