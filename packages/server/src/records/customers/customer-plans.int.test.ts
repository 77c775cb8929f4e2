import { CompiledQuery, sql } from "kysely";
import { describe, expect, it } from "vitest";
import { withCustomers, type CustomersToWrite } from "./customer.repository.js";
import { planForAnyValues } from "../../db/sql.js";
import { sqlLiteral, withOneStore } from "../../../test/automations.js";

describe("a customer write's look at the customers stored under its keys", () => {
  it("goes by the store and key's unique index, in a plan made once for every run, whatever the statistics", async () => {
    await withOneStore(async (db, storeId) => {
      // Another store of the team holds 50,000 customers, analyzed; the store written to then takes 6,000 that the
      // statistics have not seen yet (an import's first chunks after another store's import).
      const other = (await sql<{ id: number }>`insert into stores (team_id, name) select team_id, 'big' from stores where id = ${storeId} returning id`.execute(db)).rows[0]?.id;
      const fill = (store: number | undefined, count: number) =>
        sql`insert into customers (store_id, external_id, phone) select ${store}::bigint, 'c-' || g, '+1202' || (5000000 + g) from generate_series(1, ${count}) as g`.execute(db);
      await fill(other, 50_000);
      await sql`analyze customers`.execute(db);
      await fill(storeId, 6_000);
      const plan = async (moment: string, store: number, runs: number) => {
        const args: CustomersToWrite = { storeId: store, writes: Array.from({ length: 2000 }, (_, i) => ({ key: { external_id: `c-${i * 7 + 1}`, keyed_by_phone: false }, fields: { phone: `+1415${5_550_000 + i}`, first_name: `F${i}` } })) };
        const { sql: text, parameters } = withCustomers(db, (pick) => pick(args), ["phone", "first_name"], false).selectFrom("customer").select("id").compile();
        // As a batch or an import's chunk runs it: in a transaction whose statements are planned for any values.
        await db.transaction().execute(async (trx) => {
          await planForAnyValues(trx);
          await trx.executeQuery(CompiledQuery.raw(`prepare customers_written as ${text}`));
          for (let run = 1; run < runs; run++) await trx.executeQuery(CompiledQuery.raw(`explain execute customers_written(${parameters.map(sqlLiteral).join(", ")})`));
          const explained = await trx.executeQuery<{ "QUERY PLAN": unknown }>(CompiledQuery.raw(`explain (format json) execute customers_written(${parameters.map(sqlLiteral).join(", ")})`));
          const shown = JSON.stringify(explained.rows[0]?.["QUERY PLAN"]);
          // Each key looked up by its index: never the store's customers read in turn and filtered by key.
          expect({ moment, plan: shown }).toMatchObject({ moment, plan: expect.stringMatching(/"Index Name":"customers_store_external_id_active_key"/) });
          expect({ moment, plan: shown }).toMatchObject({ moment, plan: expect.not.stringContaining("customers_changes_idx") });
          await trx.executeQuery(CompiledQuery.raw("deallocate customers_written"));
        });
      };
      // The statement's first run and its tenth.
      for (const run of [1, 10]) await plan(`run ${run}: the store written to new to the statistics`, storeId, run);
      await plan("the other store", other ?? 0, 1);
      await sql`analyze customers`.execute(db);
      await plan("both analyzed", storeId, 10);
    });
  });
});
