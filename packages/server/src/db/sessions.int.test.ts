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

describe.runIf(process.env.TEST_DB === "postgres")("the service's PostgreSQL sessions", () => {
  it("never compile a statement with JIT, on every connection of the pool", async () => {
    const { db } = database.handle;
    // Held at once, so that each is a connection of its own.
    const answers = await Promise.all(
      Array.from({ length: 6 }, () => db.transaction().execute(async (trx) => (await sql<{ jit: string }>`select current_setting('jit') as jit, pg_sleep(0.05)`.execute(trx)).rows[0]?.jit)),
    );
    expect(answers).toEqual(Array(6).fill("off"));
    const plan = (await sql<{ "QUERY PLAN": unknown }>`explain (analyze, format json) ${COSTLY}`.execute(db)).rows[0]?.["QUERY PLAN"];
    expect(JSON.stringify(plan)).toMatch(/"Total Cost":\s*\d{6,}/);
    expect(JSON.stringify(plan)).not.toContain('"JIT"');
  });

  it("compile with JIT when the URL's options ask for it", async () => {
    const url = new URL(database.url ?? "");
    url.searchParams.set("options", "-c jit=on");
    const asked = await openDatabase({ kind: "postgres", url: url.toString(), poolSize: 1 });
    try {
      expect((await sql<{ jit: string }>`select current_setting('jit') as jit`.execute(asked.db)).rows[0]?.jit).toBe("on");
    } finally {
      await asked.close();
    }
  });
});
