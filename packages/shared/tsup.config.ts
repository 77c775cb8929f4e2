import { defineConfig } from "tsup";

export default defineConfig({
  // The error table alone, free of zod, is what the SDK bundles.
  entry: ["src/index.ts", "src/errors.ts"],
  format: ["esm", "cjs"],
  dts: true,
  clean: true,
  sourcemap: true,
  target: "node18",
});
