import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

/**
 * The built package's declarations, compiled as a consumer with the strictest
 * settings would (`strict/consumer.ts`: every public method and option, values
 * that may be undefined): a type that breaks under
 * `exactOptionalPropertyTypes` or `noUncheckedIndexedAccess` fails here.
 */
const run = promisify(execFile);
const tsc = path.resolve(import.meta.dirname, "../node_modules/typescript/bin/tsc");

describe("a strict consumer", () => {
  it("compiles a use of every public method and option under strict, exactOptionalPropertyTypes and noUncheckedIndexedAccess", async () => {
    const result = await run(process.execPath, [tsc, "-p", path.resolve(import.meta.dirname, "strict/tsconfig.json")]).then(
      () => ({ code: 0, output: "" }),
      (error: { code: number; stdout: string }) => ({ code: error.code, output: error.stdout }),
    );
    expect(result).toEqual({ code: 0, output: "" });
  });
});
