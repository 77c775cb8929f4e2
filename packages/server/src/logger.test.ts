import { execFile } from "node:child_process";
import path from "node:path";
import { Writable } from "node:stream";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { createLogger, pathForLog } from "./logger.js";

/** The JSON lines a logger writes, parsed. */
function capture() {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split("\n").filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { lines, logger: createLogger("info", "json", destination) };
}

describe("logger", () => {
  it("censors an Authorization header or a key wherever the service could log one", () => {
    const { lines, logger } = capture();
    logger.info({ authorization: "Bearer sk_live_1", headers: { authorization: "Bearer sk_live_2", accept: "*/*" }, key: "sk_live_3" }, "one");
    logger.info({ req: { headers: { authorization: "Bearer sk_live_4" } }, request: { authorization: "Bearer sk_live_5" }, apiKey: "sk_live_6" }, "two");
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({ msg: "one", authorization: "[redacted]", headers: { authorization: "[redacted]", accept: "*/*" }, key: "[redacted]" });
    expect(lines[1]).toMatchObject({ msg: "two", req: { headers: { authorization: "[redacted]" } }, request: { authorization: "[redacted]" }, apiKey: "[redacted]" });
    expect(JSON.stringify(lines)).not.toContain("sk_live");
  });

  it("writes every other field as given", () => {
    const { lines, logger } = capture();
    logger.info({ jobId: 7, flow: "post_purchase", content: { text: "Thanks!", authorizationCode: "A1" } }, "automation succeeded");
    expect(lines[0]).toMatchObject({ level: 30, service: "commerce-ingest", msg: "automation succeeded", jobId: 7, flow: "post_purchase", content: { text: "Thanks!", authorizationCode: "A1" } });
  });

  it("masks long digit runs in a path", () => {
    expect(pathForLog("/api/v1/stores/1/customers/%2B12025550123")).toBe("/api/v1/stores/1/customers/…");
    // A console link's secret, opened in a browser, never reaches the log.
    expect(pathForLog("/reset/Abc_def-123xyz")).toBe("/reset/…");
    expect(pathForLog("/verify/Abc_def-123xyz")).toBe("/verify/…");
    expect(pathForLog("/invite/Abc_def-123xyz")).toBe("/invite/…");
    expect(pathForLog("/stores/1/requests/5")).toBe("/stores/1/requests/5");
  });

  // Lines go to stdout without waiting on each write: what is still in hand when the process ends is written all the same.
  it.each([
    ["exits at once", "process.exit(1);"],
    ["dies of an error no one caught", "throw new Error('unforeseen');"],
  ])("writes every line to stdout when the process %s", async (_, end) => {
    const script = [
      `import { createLogger } from ${JSON.stringify(path.join(import.meta.dirname, "logger.ts"))};`,
      "const logger = createLogger('info', 'json');",
      "for (let i = 0; i < 500; i++) logger.info({ i }, 'line');",
      "logger.fatal('could not go on');",
      end,
    ].join("\n");
    const tsx = path.join(import.meta.dirname, "..", "node_modules", ".bin", "tsx");
    const outcome = await promisify(execFile)(tsx, ["--eval", script, "--input-type=module"]).then(
      () => ({ stdout: "", code: 0 }),
      (error: { stdout: string; code: number }) => error,
    );
    expect(outcome.code).toBe(1);
    const lines = outcome.stdout.split("\n").filter(Boolean).map((line) => JSON.parse(line) as { msg: string; i?: number });
    expect(lines).toHaveLength(501);
    expect(lines.slice(0, 500).map((line) => line.i)).toEqual(Array.from({ length: 500 }, (_, i) => i));
    expect(lines[500]).toMatchObject({ msg: "could not go on" });
  });
});
