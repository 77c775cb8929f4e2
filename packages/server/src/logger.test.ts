import { Writable } from "node:stream";
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
});
