import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "./index.js";
import { createTestDatabase } from "../../test/helpers.js";

let database: Awaited<ReturnType<typeof createTestDatabase>>;

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.drop());

/** A statement PostgreSQL estimates far above `jit_above_cost` (100,000 by default): ten million rows joined. */
const COSTLY = sql`select count(*) from generate_series(1, 1000) a, generate_series(1, 10000) b where a + b > 0`;

type Settings = { jit: string };
const settingsOf = sql<Settings>`select current_setting('jit') as jit`;

describe("the service's database sessions", () => {
  it("never compile a statement with JIT, on every connection", async () => {
    const { db } = database.handle;
    // Held at once, so that on PostgreSQL each is a connection of its own.
    const answers = await Promise.all(Array.from({ length: 6 }, () => db.transaction().execute(async (trx) => (await settingsOf.execute(trx)).rows[0])));
    expect(answers).toEqual(Array(6).fill({ jit: "off" }));
    const plan = JSON.stringify((await sql<{ "QUERY PLAN": unknown }>`explain (analyze, format json) ${COSTLY}`.execute(db)).rows[0]?.["QUERY PLAN"]);
    expect(plan).toMatch(/"Total Cost":\s*\d{6,}/);
    expect(plan).not.toContain('"JIT"');
  });

  it.runIf(process.env.TEST_DB === "postgres")("keep what the URL's options set", async () => {
    const url = new URL(database.url ?? "");
    url.searchParams.set("options", "-c jit=on -c work_mem=8MB");
    const asked = await openDatabase({ kind: "postgres", url: url.toString(), poolSize: 1 });
    try {
      const row = (await sql<Settings & { work_mem: string }>`select current_setting('jit') as jit, current_setting('work_mem') as work_mem`.execute(asked.db)).rows[0];
      expect(row).toEqual({ jit: "on", work_mem: "8MB" });
    } finally {
      await asked.close();
    }
  });
});
