import { defineConfig } from "vitest/config";

// The integration suite runs once per database: always on the embedded one, and on
// PostgreSQL when TEST_DATABASE_URL names a server (CI always sets it).
const postgresUrl = process.env.TEST_DATABASE_URL;
const integration = ["packages/server/test/**/*.test.ts"];

export default defineConfig({
  test: {
    pool: "forks",
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    projects: [
      { extends: true, test: { name: "unit", include: ["packages/*/src/**/*.test.ts"] } },
      { extends: true, test: { name: "embedded", include: integration, env: { TEST_DB: "embedded" } } },
      ...(postgresUrl
        ? [{ extends: true, test: { name: "postgres", include: integration, env: { TEST_DB: "postgres", TEST_DATABASE_URL: postgresUrl } } }]
        : []),
    ],
  },
});
