import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseEnv } from "./env.js";

describe("configuration", () => {
  it("has working defaults", () => {
    const env = parseEnv({});
    expect(env).toMatchObject({ port: 3000, host: "127.0.0.1", databaseUrl: undefined, bodyLimitBytes: 1048576, logLevel: "info" });
    expect(env.dataDir).toBe(path.resolve(".data"));
  });

  it("treats empty variables as unset", () => {
    expect(parseEnv({ DATABASE_URL: "", PORT: "" })).toMatchObject({ databaseUrl: undefined, port: 3000 });
  });

  it("names every invalid variable", () => {
    expect(() => parseEnv({ PORT: "http", DATABASE_URL: "mysql://x", LOG_LEVEL: "loud" })).toThrow(/PORT[\s\S]*DATABASE_URL[\s\S]*LOG_LEVEL/);
  });

  it("refuses a webhook timeout that is not shorter than the job lease, which would let a second worker deliver while the first still waits", () => {
    const webhook = { MESSAGING_WEBHOOK_URL: "https://hooks.example/messages", MESSAGING_WEBHOOK_SECRET: "0123456789abcdef" };
    expect(() => parseEnv({ ...webhook, MESSAGING_WEBHOOK_TIMEOUT_MS: "55000", JOB_LEASE_SECONDS: "60" })).toThrow(
      /MESSAGING_WEBHOOK_TIMEOUT_MS: with DATABASE_CONNECT_TIMEOUT_MS, must be shorter than JOB_LEASE_SECONDS/,
    );
    expect(parseEnv({ ...webhook, MESSAGING_WEBHOOK_TIMEOUT_MS: "54000", JOB_LEASE_SECONDS: "60" }).webhook?.timeoutMs).toBe(54000);
  });

  it("refuses a short or low-entropy admin token", () => {
    expect(() => parseEnv({ ADMIN_TOKEN: "short-token-1234" })).toThrow(/ADMIN_TOKEN: must be at least 24 characters/);
    expect(() => parseEnv({ ADMIN_TOKEN: "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" })).toThrow(/ADMIN_TOKEN: is too weak/);
    expect(parseEnv({ ADMIN_TOKEN: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b" }).adminToken).toBe("9f86d081884c7d659a2feaa0c55ad015a3bf4f1b");
  });

  it("refuses an in-process worker that could take every database connection", () => {
    const postgres = { DATABASE_URL: "postgres://127.0.0.1/x", DATABASE_POOL_SIZE: "4" };
    expect(() => parseEnv({ ...postgres, WORKER_CONCURRENCY: "4" })).toThrow(/WORKER_CONCURRENCY: must be below DATABASE_POOL_SIZE/);
    expect(parseEnv({ ...postgres, WORKER_CONCURRENCY: "4", RUN_WORKER: "false" }).worker.concurrency).toBe(4);
  });

  it("runs one group of jobs at a time when delivery is local, four deliveries at a time by webhook, unless told", () => {
    const webhook = { MESSAGING_WEBHOOK_URL: "https://hooks.example/messages", MESSAGING_WEBHOOK_SECRET: "0123456789abcdef" };
    expect(parseEnv({}).worker.concurrency).toBe(1);
    expect(parseEnv(webhook).worker.concurrency).toBe(4);
    expect(parseEnv({ WORKER_CONCURRENCY: "3" }).worker.concurrency).toBe(3);
    expect(parseEnv({ ...webhook, WORKER_CONCURRENCY: "2" }).worker.concurrency).toBe(2);
  });
});
