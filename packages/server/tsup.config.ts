import { defineConfig } from "tsup";

export default defineConfig({
  // Each entry point lives in src/bin; the built file names are what `pnpm start`, `worker`, `migrate` and `admin` run.
  entry: { main: "src/bin/main.ts", worker: "src/bin/worker.ts", migrate: "src/bin/migrate.ts", admin: "src/bin/admin.ts" },
  format: ["esm"],
  clean: true,
  sourcemap: true,
  target: "node20",
  splitting: true,
});
