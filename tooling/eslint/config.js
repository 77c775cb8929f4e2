// The project's lint rules: what the code already follows by discipline, made checkable,
// and the boundaries between layers (see the README's architecture section).
import js from "@eslint/js";
import tseslint from "typescript-eslint";

/** Frameworks and the HTTP layer: the business code (services, automations, repositories) never reaches for them. */
const transport = [
  { group: ["express", "express/*"], message: "HTTP lives in http/: services and automations take plain values." },
  { group: ["@trpc/*", "trpc-to-openapi"], message: "Procedures live in routers: nothing below them imports tRPC." },
  { group: ["**/api/*", "**/api/**"], message: "The HTTP layer calls services, never the other way round." },
  { group: ["**/*.router.js", "**/trpc.js", "**/procedures.js"], message: "Routers call services, never the other way round." },
];

/**
 * The server's folders, top to bottom: a folder imports only from folders
 * below it (and the root's own modules: errors, time, logger, trpc...). The
 * composition root (app.ts, server.ts, router.ts, seed.ts) and the entry
 * points (bin/, cli/) sit above them all.
 */
const LAYERS = [
  ["api", "the HTTP adapter, OpenAPI, docs, the console's and the operator's endpoints"],
  ["imports", "bulk imports"],
  ["records", "the four resources and their one write path"],
  ["accounts", "people who sign in, sessions, invitations, the audit log"],
  ["requests", "idempotency and the request log"],
  ["tenancy", "teams, stores, keys, the rate limit"],
  ["automations", "flows, their triggers, jobs and the worker"],
  ["db", "the database"],
];
const COMPOSITION = { group: ["**/app.js", "**/server.js", "**/router.js", "**/seed.js", "**/bin/**", "**/cli/**"], message: "The composition root and entry points put the layers together; no layer imports them." };
const serviceBan = { group: ["**/*.service.js"], message: "Repositories hold SQL only; services call them, never the other way round." };

/** Folders whose code below their routers never reaches for HTTP or tRPC: a worker loads them without the web layer. */
const PLAIN = new Set(["imports", "records", "automations", "db"]);
/** Where procedures are declared: the routers, and the records' base procedures they are built from. */
const ROUTERS = ["**/*.router.ts", "**/procedures.ts"];

/**
 * For each folder, its imports of the folders above it are refused; its services and automations also refuse the
 * transport, its repositories services; and in imports/, records/, automations/ and db/ every file but a router.
 */
function serverLayers() {
  return LAYERS.flatMap(([folder], index) => {
    const above = LAYERS.slice(0, index).map(([name, holds]) => ({ group: [`**/${name}/**`], message: `${folder}/ sits below ${name}/ (${holds}): import downwards only.` }));
    const boundaries = [...above, COMPOSITION];
    const files = (glob) => [`packages/server/src/${folder}/${glob}`];
    const rule = (patterns) => ({ "no-restricted-imports": ["error", { patterns }] });
    return [
      { files: files("**/*.ts"), rules: rule(boundaries) },
      ...(PLAIN.has(folder) ? [{ files: files("**/*.ts"), ignores: ROUTERS, rules: rule([...boundaries, ...transport]) }] : []),
      { files: files("**/*.service.ts"), rules: rule([...boundaries, ...transport]) },
      { files: files("**/*.repository.ts"), rules: rule([...boundaries, ...transport, serviceBan]) },
    ].map((config) => ({ ...config, ignores: ["**/*.test.ts", ...(config.ignores ?? [])] }));
  });
}

export default tseslint.config(
  { ignores: ["**/dist/**", "**/node_modules/**", "**/*.js", "**/*.mjs", "**/*.cjs", ".data/**", "**/.data/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true } },
    linterOptions: { reportUnusedDisableDirectives: "error" },
    rules: {
      "@typescript-eslint/no-non-null-assertion": "error",
      "@typescript-eslint/consistent-type-imports": ["error", { fixStyle: "inline-type-imports" }],
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_", destructuredArrayIgnorePattern: "^_" }],
      // Configuration is read once, validated, in env.ts.
      "no-restricted-properties": ["error", { object: "process", property: "env", message: "Read configuration in env.ts (the only reader of process.env)." }],
    },
  },
  {
    // The one reader of the environment, and tests, which pick their database and binaries from it.
    files: ["packages/server/src/env.ts", "**/test/**", "**/e2e/**", "**/*.test.ts", "examples/**", "packages/sdk/src/client.ts", "**/*.config.ts"],
    rules: { "no-restricted-properties": "off" },
  },
  {
    // Tests read response bodies as arbitrary JSON and assert on them with expect.
    files: ["**/test/**", "**/*.test.ts"],
    rules: {
      "@typescript-eslint/no-unsafe-assignment": "off",
      "@typescript-eslint/no-unsafe-member-access": "off",
      "@typescript-eslint/no-unsafe-call": "off",
      "@typescript-eslint/no-unsafe-argument": "off",
      "@typescript-eslint/no-unsafe-return": "off",
    },
  },
  ...serverLayers(),
  {
    // Shared schemas run in the server, the SDK and any browser: no server, database or Node imports.
    files: ["packages/shared/src/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        { patterns: [{ group: ["node:*", "pg", "kysely", "@electric-sql/*", "express", "@trpc/*", "@commerce-ingest/server", "**/server/**"], message: "shared holds schemas and types only." }] },
      ],
    },
  },
);
