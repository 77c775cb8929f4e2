import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

/** Where `pnpm dev` finds the server for the console's API (and the REST API, for the snippets). */
const server = process.env.CONSOLE_API_URL ?? "http://127.0.0.1:3000";

export default defineConfig({
  plugins: [react()],
  // No source map in the build: the server would serve it to anyone, with the console's sources.
  build: { outDir: "dist", emptyOutDir: true, sourcemap: false },
  server: {
    port: 5173,
    proxy: { "/console/trpc": server, "/console/live": server, "/api": server, "/docs": server },
  },
});
