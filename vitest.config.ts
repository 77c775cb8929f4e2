import net from "node:net";
import { configDefaults, defineConfig } from "vitest/config";

const DEFAULT_POSTGRES = "postgres://postgres@127.0.0.1:5432/test";

/** True when something accepts connections at the URL's host and port. */
function reachable(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect({ host: hostname, port: Number(port || 5432), timeout: 1000 });
    socket.once("connect", () => (socket.destroy(), resolve(true)));
    socket.once("error", () => resolve(false));
    socket.once("timeout", () => (socket.destroy(), resolve(false)));
  });
}

// The integration suite runs once per database: always on the embedded one, and on
// PostgreSQL at TEST_DATABASE_URL (or the local default when one answers there).
export default defineConfig(async () => {
  const postgresUrl = process.env.TEST_DATABASE_URL ?? ((await reachable(DEFAULT_POSTGRES)) ? DEFAULT_POSTGRES : undefined);
  if (process.env.CI && !postgresUrl) throw new Error("CI needs PostgreSQL: set TEST_DATABASE_URL");
  // Said once, though every project re-reads this file.
  if (!process.env.INGEST_TEST_DATABASES_SAID) console.log(postgresUrl ? `Integration tests: embedded and PostgreSQL (${new URL(postgresUrl).host})` : "Integration tests: embedded only (no PostgreSQL found; set TEST_DATABASE_URL)");
  process.env.INGEST_TEST_DATABASES_SAID = "1";
  // Integration tests (over HTTP, on a real database) sit beside what they test as `*.int.test.ts`; process tests in test/.
  const integration = ["packages/server/src/**/*.int.test.ts", "packages/server/test/**/*.test.ts"];
  // Tests where the database does not matter run on one of them only: PostgreSQL when the run has it.
  const databases = postgresUrl ? "embedded,postgres" : "embedded";
  return {
    test: {
      pool: "forks",
      maxWorkers: 2,
      // Many tests start a server of their own (a fresh database, migrated) and setup starts servers and processes:
      // deadlines for a busy machine (two suites on two cores), not measures.
      testTimeout: 120_000,
      hookTimeout: 300_000,
      // What a test polls for must happen: the deadline is for a busy machine (two suites at once), not a measure.
      expect: { poll: { timeout: 30_000 } },
      projects: [
        { extends: true, test: { name: "unit", include: ["packages/*/src/**/*.test.ts"], exclude: [...configDefaults.exclude, "**/*.int.test.ts"] } },
        {
          extends: true,
          test: {
            name: "sdk",
            include: ["packages/sdk/test/**/*.test.ts", "packages/local/test/**/*.test.ts", "examples/**/*.test.ts"],
            // The edge runtime's own test runs in its project (below).
            exclude: [...configDefaults.exclude, "packages/sdk/test/edge.test.ts"],
            env: postgresUrl ? { TEST_DATABASE_URL: postgresUrl } : {},
          },
        },
        // The SDK's tests that need no service, again in an edge runtime (Web APIs only: no Buffer, no process, no require).
        { extends: true, test: { name: "sdk-edge", include: ["packages/sdk/test/retries.test.ts", "packages/sdk/test/webhooks.test.ts", "packages/sdk/test/edge.test.ts"], environment: "edge-runtime" } },
        // Faults (PostgreSQL restarted, crashed, frozen; processes killed): `pnpm test:faults`, on a cluster of their own.
        ...(process.env.INGEST_FAULTS ? [{ extends: true, test: { name: "faults", include: ["packages/server/faults/**/*.test.ts"], testTimeout: 240_000 } }] : []),
        // The web console in Chromium, against the built server and console.
        // A browser test drives whole journeys: its deadline is for two suites on two cores, not a measure.
        { extends: true, test: { name: "browser", include: ["packages/web/e2e/**/*.test.ts"], testTimeout: 240_000 } },
        { extends: true, test: { name: "embedded", include: integration, env: { TEST_DB: "embedded", TEST_DATABASES: databases } } },
        ...(postgresUrl
          ? [{ extends: true, test: { name: "postgres", include: integration, env: { TEST_DB: "postgres", TEST_DATABASES: databases, TEST_DATABASE_URL: postgresUrl } } }]
          : []),
      ],
    },
  };
});
