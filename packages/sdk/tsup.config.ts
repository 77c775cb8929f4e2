import { defineConfig } from "tsup";

// The shared package is bundled in (its types too), so the published SDK stands alone:
// its only dependency is zod, which the shared types are written in.
export default defineConfig({
  entry: ["src/index.ts"],
  format: ["esm", "cjs"],
  dts: { resolve: ["@commerce-ingest/shared"] },
  noExternal: ["@commerce-ingest/shared"],
  clean: true,
  sourcemap: true,
  target: "node18",
  platform: "node",
});
