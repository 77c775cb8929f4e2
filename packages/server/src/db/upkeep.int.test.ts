import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DatabaseHandle } from "./index.js";
import type { Db } from "./types.js";
import { startUpkeep, upkeep, upkeepOf } from "./upkeep.js";
import { createLogger } from "../logger.js";
import { createTestDatabase, testDb } from "../../test/helpers.js";

describe("upkeepOf: autovacuum's rule", () => {
  it("vacuums past 50 dead rows plus a fifth of the rows, analyzes past 50 changed rows plus a tenth, and vacuums first", () => {
    expect(upkeepOf({ live: 1000, dead: 250, changed: 0 })).toBeUndefined();
    expect(upkeepOf({ live: 1000, dead: 251, changed: 0 })?.did).toBe("vacuum");
    expect(upkeepOf({ live: 1000, dead: 0, changed: 150 })).toBeUndefined();
    expect(upkeepOf({ live: 1000, dead: 0, changed: 151 })?.did).toBe("analyze");
    expect(upkeepOf({ live: 0, dead: 51, changed: 51 })?.did).toBe("vacuum");
    // Where autovacuum vacuums (PostgreSQL), the upkeep only analyzes.
    expect(upkeepOf({ live: 1000, dead: 251, changed: 0 }, false)).toBeUndefined();
    expect(upkeepOf({ live: 1000, dead: 251, changed: 151 }, false)?.did).toBe("analyze");
  });
});

type Stats = { dead: number; changed: number; vacuumed: Date | null; analyzed: Date | null };

const statsOf = async (db: Db, table: string): Promise<Stats | undefined> =>
  (
    await sql<Stats>`
      select n_dead_tup::int as dead, n_mod_since_analyze::int as changed, last_vacuum as vacuumed, last_analyze as analyzed
      from pg_stat_user_tables where relname = ${table}`.execute(db)
  ).rows[0];

/** Has the statistics this connection left reported now, not when it next goes idle (at most once a second). */
async function flushStats(db: Db): Promise<void> {
  await sql`select pg_stat_force_next_flush()`.execute(db);
  await sql`select 1`.execute(db);
}

/**
 * A table of `rows` rows, each updated once: as many dead rows, reported (on
 * one connection, the one whose statistics are flushed). Autovacuum stays off
 * it, so that what happens to it is the upkeep's doing.
 */
async function tableWithDeadRows(db: Db, table: string, rows: number): Promise<void> {
  await db.connection().execute(async (conn) => {
    await sql`create table ${sql.table(table)} (id int primary key, v int) with (autovacuum_enabled = false)`.execute(conn);
    await sql`insert into ${sql.table(table)} select g, g from generate_series(1, ${rows}::int) g`.execute(conn);
    await sql`update ${sql.table(table)} set v = v + 1`.execute(conn);
    await flushStats(conn);
  });
}

/** Runs the upkeep until it tends to `table`: other tables may be past their rule too, and each run tends to the furthest one. */
async function upkeepUntil(db: Db, database: "embedded" | "postgres", table: string) {
  let done: Awaited<ReturnType<typeof upkeep>>;
  for (let runs = 0; (done = await upkeep(db, database)) && done.table !== table; runs++) expect(runs).toBeLessThan(30);
  return done;
}

/** A fresh database of the run's kind for the describe block that calls it. */
function freshDatabase(): () => Db {
  let database: { handle: DatabaseHandle; drop(): Promise<void> } | undefined;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await database?.drop();
  });
  return () => {
    if (!database) throw new Error("no test database");
    return database.handle.db;
  };
}

// The embedded database has no autovacuum: the service runs this upkeep on it (PostgreSQL runs its own).
describe.runIf(testDb === "embedded")("the embedded database's upkeep", () => {
  const database = freshDatabase();

  it("reclaims the dead rows of the table furthest past its rule, and analyzes it", async () => {
    const db = database();
    await tableWithDeadRows(db, "upkeep_probe", 5000);
    expect((await statsOf(db, "upkeep_probe"))?.dead).toBeGreaterThanOrEqual(5000);
    expect(await upkeepUntil(db, "embedded", "upkeep_probe")).toEqual({ table: "upkeep_probe", did: "vacuum" });
    await flushStats(db);
    expect(await statsOf(db, "upkeep_probe")).toMatchObject({ dead: 0, changed: 0, vacuumed: expect.any(Date), analyzed: expect.any(Date) });
    // Nothing of it is left to do.
    let done: Awaited<ReturnType<typeof upkeep>>;
    while ((done = await upkeep(db, "embedded"))) expect(done.table).not.toBe("upkeep_probe");
  });

  it("runs by itself, a step at a time, until stopped", async () => {
    const db = database();
    await tableWithDeadRows(db, "upkeep_timed", 2000);
    const stop = startUpkeep(db, "embedded", createLogger("silent"), 20);
    try {
      const deadline = Date.now() + 10_000;
      while ((await statsOf(db, "upkeep_timed"))?.dead !== 0 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        await flushStats(db);
      }
      expect(await statsOf(db, "upkeep_timed")).toMatchObject({ dead: 0, vacuumed: expect.any(Date) });
    } finally {
      await stop();
    }
  });
});

// On PostgreSQL autovacuum vacuums and analyzes, once a minute: the upkeep only analyzes, as soon as the rule says.
describe.runIf(testDb === "postgres")("the upkeep on PostgreSQL", () => {
  const database = freshDatabase();

  it("analyzes a table as soon as autovacuum's rule says, and leaves its vacuum to autovacuum", async () => {
    const db = database();
    await tableWithDeadRows(db, "upkeep_probe", 5000);
    expect(await statsOf(db, "upkeep_probe")).toMatchObject({ dead: 5000, changed: 10000, analyzed: null });
    expect(await upkeepUntil(db, "postgres", "upkeep_probe")).toEqual({ table: "upkeep_probe", did: "analyze" });
    expect(await statsOf(db, "upkeep_probe")).toMatchObject({ dead: 5000, changed: 0, vacuumed: null, analyzed: expect.any(Date) });
  });
});
