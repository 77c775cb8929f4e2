// The project's lint rules: what the code already follows by discipline, made checkable,
// and the boundaries between layers (see the README's architecture section).
import js from "@eslint/js";
import tseslint from "typescript-eslint";

/** Frameworks and the HTTP layer: the business code (services, automations, repositories) never reaches for them. */
const transport = [
  { group: ["express", "express/*"], message: "HTTP lives in http/: services and automations take plain values." },
  { group: ["@trpc/*", "trpc-to-openapi"], message: "Procedures live in routers: services and automations never import tRPC." },
  { group: ["**/http/*", "**/http/**"], message: "The HTTP layer calls services, never the other way round." },
  { group: ["**/*.router.js", "**/trpc.js", "**/procedures.js"], message: "Routers call services, never the other way round." },
];

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
  {
    files: ["packages/server/src/modules/**/*.service.ts", "packages/server/src/automations/**/*.ts"],
    ignores: ["**/*.test.ts"],
    rules: { "no-restricted-imports": ["error", { patterns: transport }] },
  },
  {
    files: ["packages/server/src/**/*.repository.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        { patterns: [...transport, { group: ["**/*.service.js"], message: "Repositories hold SQL only; services call them, never the other way round." }] },
      ],
    },
  },
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
