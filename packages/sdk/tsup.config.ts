import { defineConfig } from "tsup";

// The shared package's error table is bundled in, so the published SDK stands alone with no
// runtime dependency; its data types are the SDK's own interfaces (src/types.ts), never zod's.
export default defineConfig([
  {
  entry: ["src/index.ts"],
  format: ["esm", "cjs"],
  dts: true,
  noExternal: [/^@commerce-ingest\/shared/],
  clean: true,
  sourcemap: true,
  target: "node18",
  platform: "node",
  },
  // The command line (`npx @commerce-ingest/sdk import ...`): one ES module file, the client bundled in.
  { entry: ["src/cli.ts"], format: ["esm"], noExternal: [/^@commerce-ingest\/shared/], clean: false, sourcemap: false, target: "node18", platform: "node" },
]);
