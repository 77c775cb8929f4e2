import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedDemo } from "../src/seed.js";
import { createTestDatabase, refuseInserts } from "./helpers.js";

let database: Awaited<ReturnType<typeof createTestDatabase>>;
let dataDir: string;

beforeAll(async () => {
  database = await createTestDatabase();
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "seed-"));
});
afterAll(async () => {
  await database?.drop();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe("demo seeding", () => {
  it("is all or nothing: a failure halfway leaves no demo team, and the next start seeds it whole", async () => {
    const { db } = database.handle;
    const restore = await refuseInserts(db, "api_keys");
    try {
      await expect(seedDemo(db, dataDir, "http://127.0.0.1:3000")).rejects.toThrow();
    } finally {
      await restore();
    }
    expect(await db.selectFrom("teams").select("id").execute()).toEqual([]);
    expect(await db.selectFrom("stores").select("id").execute()).toEqual([]);
    expect(fs.existsSync(path.join(dataDir, "demo.env"))).toBe(false);

    const demo = await seedDemo(db, dataDir, "http://127.0.0.1:3000");
    expect(demo).toMatchObject({ baseUrl: "http://127.0.0.1:3000", storeId: expect.any(Number), apiKey: expect.stringMatching(/^[A-Za-z0-9]{24}$/) });
    expect(fs.readFileSync(path.join(dataDir, "demo.env"), "utf8")).toContain(`API_KEY=${demo?.apiKey}`);
    expect(await db.selectFrom("api_keys").select("id").execute()).toHaveLength(1);
    // Seeded once: a later start finds the team and leaves everything as it is.
    expect(await seedDemo(db, dataDir, "http://127.0.0.1:3000")).toBeUndefined();
  });
});
