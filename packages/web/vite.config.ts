import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

/** Where `pnpm dev` finds the server for the console's API (and the REST API, for the snippets). */
const server = process.env.CONSOLE_API_URL ?? "http://127.0.0.1:3000";

export default defineConfig({
  plugins: [react()],
  build: { outDir: "dist", emptyOutDir: true, sourcemap: true },
  server: {
    port: 5173,
    proxy: { "/console/trpc": server, "/api": server, "/docs": server },
  },
});
