import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DatabaseHandle } from "../src/db/index.js";
import { startUpkeep, upkeep, upkeepOf } from "../src/db/upkeep.js";
import { createLogger } from "../src/logger.js";
import { createTestDatabase, testDb } from "./helpers.js";

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

// The embedded database has no autovacuum: the service runs this upkeep on it (PostgreSQL runs its own).
describe.runIf(testDb === "embedded")("the embedded database's upkeep", () => {
  let database: { handle: DatabaseHandle; drop(): Promise<void> };
  // The statistics a transaction leaves are reported when the backend next goes idle, at most once a second unless forced.
  const flushStats = async () => {
    await sql`select pg_stat_force_next_flush()`.execute(database.handle.db);
    await sql`select 1`.execute(database.handle.db);
  };
  const stats = async (table: string) =>
    (
      await sql<{ dead: number; changed: number; vacuumed: Date | null; analyzed: Date | null }>`
        select n_dead_tup::int as dead, n_mod_since_analyze::int as changed, last_vacuum as vacuumed, last_analyze as analyzed
        from pg_stat_user_tables where relname = ${table}`.execute(database.handle.db)
    ).rows[0];

  /** A table of `rows` rows, each updated once: as many dead rows, reported. */
  const tableWithDeadRows = async (table: string, rows: number) => {
    const db = database.handle.db;
    await sql`create table ${sql.table(table)} (id int primary key, v int)`.execute(db);
    await sql`insert into ${sql.table(table)} select g, g from generate_series(1, ${rows}::int) g`.execute(db);
    await sql`update ${sql.table(table)} set v = v + 1`.execute(db);
    await flushStats();
  };

  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await database.drop();
  });

  it("reclaims the dead rows of the table furthest past its rule, and analyzes it", async () => {
    const db = database.handle.db;
    await tableWithDeadRows("upkeep_probe", 5000);
    expect((await stats("upkeep_probe"))?.dead).toBeGreaterThanOrEqual(5000);
    // Other tables may be past their rule too; each run tends to the furthest one.
    let done: Awaited<ReturnType<typeof upkeep>>;
    for (let runs = 0; (done = await upkeep(db, "embedded")) && done.table !== "upkeep_probe"; runs++) expect(runs).toBeLessThan(30);
    expect(done).toEqual({ table: "upkeep_probe", did: "vacuum" });
    await flushStats();
    expect(await stats("upkeep_probe")).toMatchObject({ dead: 0, changed: 0, vacuumed: expect.any(Date), analyzed: expect.any(Date) });
    // Nothing of it is left to do.
    while ((done = await upkeep(db, "embedded"))) expect(done.table).not.toBe("upkeep_probe");
  });

  it("runs by itself, a step at a time, until stopped", async () => {
    const db = database.handle.db;
    await tableWithDeadRows("upkeep_timed", 2000);
    const stop = startUpkeep(db, "embedded", createLogger("silent"), 20);
    try {
      const deadline = Date.now() + 10_000;
      while ((await stats("upkeep_timed"))?.dead !== 0 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        await flushStats();
      }
      expect(await stats("upkeep_timed")).toMatchObject({ dead: 0, vacuumed: expect.any(Date) });
    } finally {
      await stop();
    }
  });
});

// On PostgreSQL autovacuum vacuums and analyzes, once a minute: the upkeep only analyzes, as soon as the rule says.
describe.runIf(testDb === "postgres")("the upkeep on PostgreSQL", () => {
  let database: { handle: DatabaseHandle; drop(): Promise<void> };

  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await database.drop();
  });

  it("analyzes a table as soon as autovacuum's rule says, and leaves its vacuum to autovacuum", async () => {
    const db = database.handle.db;
    // On one connection, whose statistics are reported when it next goes idle (forced, not after a second).
    await db.connection().execute(async (conn) => {
      // Autovacuum stays off this table, so that what happens to it is the upkeep's doing.
      await sql`create table upkeep_probe (id int primary key, v int) with (autovacuum_enabled = false)`.execute(conn);
      await sql`insert into upkeep_probe select g, g from generate_series(1, 5000) g`.execute(conn);
      await sql`update upkeep_probe set v = v + 1`.execute(conn);
      await sql`select pg_stat_force_next_flush()`.execute(conn);
    });
    const stats = async () =>
      (
        await sql<{ dead: number; changed: number; vacuumed: Date | null; analyzed: Date | null }>`
          select n_dead_tup::int as dead, n_mod_since_analyze::int as changed, last_vacuum as vacuumed, last_analyze as analyzed
          from pg_stat_user_tables where relname = 'upkeep_probe'`.execute(db)
      ).rows[0];
    expect(await stats()).toMatchObject({ dead: 5000, changed: 10000, analyzed: null });
    let done: Awaited<ReturnType<typeof upkeep>>;
    for (let runs = 0; (done = await upkeep(db, "postgres")) && done.table !== "upkeep_probe"; runs++) expect(runs).toBeLessThan(30);
    expect(done).toEqual({ table: "upkeep_probe", did: "analyze" });
    expect(await stats()).toMatchObject({ dead: 5000, changed: 0, vacuumed: null, analyzed: expect.any(Date) });
  });
});
