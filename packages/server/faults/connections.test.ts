import { sql } from "kysely";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, type DatabaseHandle } from "../src/db/index.js";
import { createCluster, faultTestsUnavailable, freePort, type Cluster } from "./cluster.js";

/**
 * A connection the client lost track of: a transaction's statement outlived
 * the client's read timeout on a frozen server, and so did the ROLLBACK sent
 * after it. Once the server answers again, the next request's statement must
 * be committed, and nothing of the abandoned transaction may stay.
 */
const unavailable = faultTestsUnavailable(Boolean(process.env.CI));

describe.runIf(!unavailable)("a connection whose statement outlived the client's read timeout", () => {
  let cluster: Cluster;
  let database: DatabaseHandle;

  beforeAll(async () => {
    cluster = await createCluster(await freePort());
    // One connection, so that a reused one would be this one; answers awaited 1.5 s (statement timeout 0.5 s, plus 1 s).
    database = await openDatabase({ kind: "postgres", url: cluster.url, poolSize: 1, timeouts: { connectMs: 2000, statementMs: 500 } });
    await sql`create table probe (id int)`.execute(database.db);
  });
  afterAll(async () => {
    await cluster?.thaw();
    await database?.close();
    await cluster?.destroy();
  });

  it("is closed, not reused: the next statement runs on a new connection and is committed", async () => {
    const stuck = database.db.transaction().execute(async (trx) => {
      await sql`insert into probe values (1)`.execute(trx);
      await cluster.freeze();
      await sql`insert into probe values (2)`.execute(trx);
    });
    // The statement's answer never comes, nor the ROLLBACK's.
    await expect(stuck).rejects.toThrow();
    await cluster.thaw();

    // The next request's statement, alone (no transaction of its own), on the pool's one connection.
    await sql`insert into probe values (3)`.execute(database.db);

    const other = new pg.Client({ connectionString: cluster.url });
    await other.connect();
    try {
      const { rows } = await other.query<{ id: number }>("select id from probe order by id");
      // What the answered statement wrote is committed; nothing of the transaction left open stays.
      expect(rows.map((row) => row.id)).toEqual([3]);
    } finally {
      await other.end();
    }
  });
});
