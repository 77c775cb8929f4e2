// Writes src/codes.ts from the service's error table (the shared package's `ERRORS`): the SDK's codes are
// the wire's, made from the one table at every build, so they cannot drift. Run by `build`.
import fs from "node:fs";
import path from "node:path";
import { ERRORS } from "@commerce-ingest/shared/errors";

const entries = Object.values(ERRORS)
  .map(({ code, status, message, retry }) => `  ${code}: { status: ${status}, message: ${JSON.stringify(message)}, retry: ${retry} },`)
  .join("\n");
const source = `// Made by scripts/codes.mjs from the service's error table at each build: edit the table, never this file.

/** Every code the API answers with, as its error bodies carry it (\`body.code\`): its status, message and whether a retry can help. */
export const ERROR_CODES = {
${entries}
} as const;

/** A code the API answers with, exactly as its error bodies carry it. More may be added in a minor release: \`error.code\` passes an unknown one through as sent. */
export type ErrorCode = keyof typeof ERROR_CODES;
`;
const file = path.join(import.meta.dirname, "../src/codes.ts");
if (!fs.existsSync(file) || fs.readFileSync(file, "utf8") !== source) fs.writeFileSync(file, source);
