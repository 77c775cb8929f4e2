import { defineConfig } from "tsup";

export default defineConfig({
  entry: { main: "src/main.ts", worker: "src/worker-main.ts", migrate: "src/migrate.ts", admin: "src/cli/admin.ts" },
  format: ["esm"],
  clean: true,
  sourcemap: true,
  target: "node20",
  splitting: true,
});
