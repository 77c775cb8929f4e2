import { CompiledQuery, sql } from "kysely";
import { describe, expect, it } from "vitest";
import { dueJobsToLock, lockDueJobs } from "./jobs.repository.js";
import type { Db } from "../db/types.js";
import { failedInLastHour } from "../api/metrics.js";
import { sqlLiteral, withOneStore } from "../../test/automations.js";

describe("watching the queue", () => {
  it("counts the last hour's failed automations from the index of failed jobs, not by reading every job ever written", async () => {
    await withOneStore(async (db, storeId) => {
      // 20,000 jobs that ended well, three that failed within the hour and two that failed before it.
      await sql`
        insert into automation_jobs (store_id, flow, dedupe_key, record_type, record_id, record_external_id, status, finished_at)
        select ${storeId}::bigint, 'post_purchase', 'ended:' || g, 'order', g, 'order-' || g,
          case when g <= 5 then 'failed' else 'succeeded' end, now() - case when g <= 2 then interval '2 hours' else interval '1 minute' end
        from generate_series(1, 20000) as g`.execute(db);
      const { sql: text } = failedInLastHour.compile(db);
      for (const moment of ["no statistics", "analyzed"]) {
        if (moment === "analyzed") await sql`analyze`.execute(db);
        const explained = await db.executeQuery<{ "QUERY PLAN": [{ Plan: { "Shared Hit Blocks": number; "Shared Read Blocks": number } }] }>(CompiledQuery.raw(`explain (analyze, buffers, format json) ${text}`));
        const top = explained.rows[0]?.["QUERY PLAN"][0].Plan;
        const pages = top ? top["Shared Hit Blocks"] + top["Shared Read Blocks"] : Infinity;
        const plan = JSON.stringify(explained.rows[0]?.["QUERY PLAN"]);
        expect({ moment, index: plan.includes('"Index Name":"automation_jobs_failed_idx"'), pages, few: pages <= 20 }).toMatchObject({ moment, index: true, few: true });
      }
      expect((await failedInLastHour.execute(db)).rows).toEqual([{ flow: "post_purchase", n: 3 }]);
    });
  });
});

describe("taking due jobs", () => {
  it("reads the index of due jobs in their order, first due first, whatever the statistics say: one shop, its tables analyzed, a backlog", async () => {
    await withOneStore(async (db, storeId) => {
      // A backlog of 5,000 due jobs, first due first by id.
      await sql`
        insert into automation_jobs (store_id, flow, dedupe_key, record_type, record_id, record_external_id, run_at)
        select ${storeId}::bigint, 'post_purchase', 'plan:' || g, 'order', g, 'order-' || g, now() - make_interval(secs => 10000 - g)
        from generate_series(1, 5000) as g`.execute(db);
      // Statistics of the moment: the store not paused, every job due.
      await sql`analyze`.execute(db);
      const { sql: text, parameters } = dueJobsToLock(db, 250).compile();
      const explained = await db.executeQuery<{ "QUERY PLAN": unknown }>(CompiledQuery.raw(`explain (format json) ${text}`, [...parameters]));
      const plan = JSON.stringify(explained.rows[0]?.["QUERY PLAN"]);
      // The first 250 from the index, in its order: never every due job read and sorted.
      expect(plan).toContain('"Index Name":"automation_jobs_due_idx"');
      expect(plan).not.toContain('"Node Type":"Sort"');
      const taken = await db.transaction().execute((trx) => lockDueJobs(trx, 250));
      expect(taken.map((job) => Number(job.record_id))).toEqual(Array.from({ length: 250 }, (_, i) => i + 1));
    });
  });

  it("reads no further than the jobs whose time has come: thousands of recoveries an hour away are not read at each claim, whatever the statistics, in a plan made for every run too", async () => {
    await withOneStore(async (db, storeId) => {
      // An hour of abandoned checkouts waiting for the store's recovery delay, and ten jobs due.
      await sql`
        insert into automation_jobs (store_id, flow, dedupe_key, record_type, record_id, record_external_id, run_at)
        select ${storeId}::bigint, 'checkout_recovery', 'waiting:' || g, 'checkout', g, 'checkout-' || g, now() + make_interval(secs => 3600 - g % 600)
        from generate_series(1, 5000) as g`.execute(db);
      await sql`
        insert into automation_jobs (store_id, flow, dedupe_key, record_type, record_id, record_external_id, run_at)
        select ${storeId}::bigint, 'post_purchase', 'due:' || g, 'order', g, 'order-' || g, now() - make_interval(secs => 100 - g)
        from generate_series(1, 10) as g`.execute(db);
      const { sql: text, parameters } = dueJobsToLock(db, 250).compile();
      type Node = { "Index Name"?: string; "Index Cond"?: string; "Shared Hit Blocks": number; "Shared Read Blocks": number; Plans?: Node[] };
      const nodes = (node: Node): Node[] => [node, ...(node.Plans ?? []).flatMap(nodes)];
      const read = async (session: Db, moment: string, explain: string, parameters: readonly unknown[] = []) => {
        const explained = await session.executeQuery<{ "QUERY PLAN": [{ Plan: Node }] }>(CompiledQuery.raw(`explain (analyze, buffers, format json) ${explain}`, [...parameters]));
        const top = explained.rows[0]?.["QUERY PLAN"][0].Plan;
        const index = top && nodes(top).find((node) => node["Index Name"] === "automation_jobs_due_idx");
        const pages = top ? top["Shared Hit Blocks"] + top["Shared Read Blocks"] : Infinity;
        // The index of due jobs, read up to now: a few pages of it and of the jobs, never the 5,000 waiting ones.
        expect({ moment, cond: index?.["Index Cond"], pages, few: pages <= 40 }).toMatchObject({ moment, cond: expect.stringContaining("run_at <= now()"), few: true });
      };
      // One session: a prepared statement, and how it is planned, are its own.
      const moments = (moment: string) =>
        db.connection().execute(async (session) => {
          await read(session, `${moment}, planned for its values`, text, parameters);
          await sql`set plan_cache_mode = force_generic_plan`.execute(session);
          await session.executeQuery(CompiledQuery.raw(`prepare due_jobs as ${text}`));
          await read(session, `${moment}, planned once for every run`, `execute due_jobs(${parameters.map(sqlLiteral).join(", ")})`);
          await session.executeQuery(CompiledQuery.raw("deallocate due_jobs"));
          await sql`reset plan_cache_mode`.execute(session);
        });
      await moments("no statistics");
      await sql`analyze`.execute(db);
      await moments("analyzed");
      // And a claim takes the ten due, first due first.
      const taken = await db.transaction().execute((trx) => lockDueJobs(trx, 250));
      expect(taken.map((job) => Number(job.record_id))).toEqual(Array.from({ length: 10 }, (_, i) => i + 1));
    });
  });
});
