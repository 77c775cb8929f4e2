import type { ImportFailure } from "@commerce-ingest/shared";
import { sql } from "kysely";
import type { Executor, ImportKind } from "../db/types.js";
import { now } from "../db/sql.js";
import { storableJson } from "../text.js";

/** What the API shows of an import, and what its runner reads. */
const IMPORT_COLUMNS = [
  "id",
  "store_id",
  "team_id",
  "kind",
  "status",
  "bytes",
  "lines",
  "chunks",
  "merged_chunks",
  "created",
  "updated",
  "failed",
  "error",
  "error_code",
  "created_at",
  "received_at",
  "started_at",
  "finished_at",
] as const;

export type ImportRow = Awaited<ReturnType<typeof findImport>> & object;

export function createImport(db: Executor, values: { storeId: number; teamId: number; keyId: number | undefined; kind: ImportKind }) {
  return db
    .insertInto("imports")
    .values({ store_id: values.storeId, team_id: values.teamId, key_id: values.keyId ?? null, kind: values.kind })
    .returning("id")
    .executeTakeFirstOrThrow();
}

/** One chunk of the file, stored as it arrives (deflated): it is durable once this returns. */
export async function appendChunk(db: Executor, importId: number, chunk: { seq: number; firstLine: number; lines: number; gaps: number[] | null; body: Buffer }): Promise<void> {
  await db.insertInto("import_chunks").values({ import_id: importId, seq: chunk.seq, first_line: chunk.firstLine, lines: chunk.lines, gaps: chunk.gaps, body: chunk.body }).execute();
}

/** The whole file is in: the import waits for its turn (unless it was taken for abandoned meanwhile: undefined). */
export function finishUpload(db: Executor, importId: number, totals: { lines: number; chunks: number; bytes: number }) {
  return db
    .updateTable("imports")
    .set({ status: "queued", lines: totals.lines, chunks: totals.chunks, bytes: totals.bytes, received_at: now(), updated_at: now() })
    .where("id", "=", importId)
    .where("status", "=", "receiving")
    .returning(IMPORT_COLUMNS)
    .executeTakeFirst();
}

/** Why an import failed, in words, by its code. */
const FAILURES: Record<ImportFailure, string> = {
  upload_interrupted: "the upload ended before the whole file arrived; nothing of it was merged",
  request_timeout: "the upload was too slow (silent, under its minimum rate, or over its time limit); nothing of it was merged",
  import_too_large: "the file passed its size limit; nothing of it was merged",
  import_file_invalid: "the file stopped being readable (a broken gzip stream); nothing of it was merged",
  merge_failed: "the service could not merge a chunk of the file; what was merged stays",
};

/** An upload that ended without its 202: the import fails with why, its chunks dropped, what arrived counted. */
export async function failUpload(db: Executor, importId: number, code: ImportFailure, totals: { lines: number; chunks: number; bytes: number }): Promise<void> {
  await db
    .updateTable("imports")
    .set({ status: "failed", error_code: code, error: FAILURES[code], lines: totals.lines, bytes: totals.bytes, finished_at: now(), updated_at: now() })
    .where("id", "=", importId)
    .where("status", "=", "receiving")
    .execute();
  await db.deleteFrom("import_chunks").where("import_id", "=", importId).execute();
}

/** The store's import, received whole (an upload still arriving is nobody's yet). */
export function findImport(db: Executor, storeId: number, importId: number) {
  return db.selectFrom("imports").select(IMPORT_COLUMNS).where("store_id", "=", storeId).where("id", "=", importId).where("status", "!=", "receiving").executeTakeFirst();
}

export function listImports(db: Executor, storeId: number, limit: number) {
  return db.selectFrom("imports").select(IMPORT_COLUMNS).where("store_id", "=", storeId).where("status", "!=", "receiving").orderBy("id", "desc").limit(limit).execute();
}

/** A page of an import's refused lines, in line order, after `afterLine`. */
export function importErrors(db: Executor, importId: number, afterLine: number, limit: number) {
  return db
    .selectFrom("import_errors")
    .select(["line", "external_id", "status", "code", "error", "details"])
    .where("import_id", "=", importId)
    .where("line", ">", afterLine)
    .orderBy("line")
    .limit(limit)
    .execute();
}

/**
 * Stops an import that has not ended: what was merged stays, the chunks not
 * merged are dropped. Undefined when it had already ended (or is not the store's).
 */
export async function cancelImport(db: Executor, storeId: number, importId: number) {
  const row = await db
    .updateTable("imports")
    .set({ status: "cancelled", finished_at: now(), updated_at: now() })
    .where("store_id", "=", storeId)
    .where("id", "=", importId)
    .where("status", "in", ["queued", "running"])
    .returning(IMPORT_COLUMNS)
    .executeTakeFirst();
  if (row) await db.deleteFrom("import_chunks").where("import_id", "=", importId).execute();
  return row;
}

/**
 * Starts the oldest queued import whose team runs fewer than `perTeam`
 * imports. Starts are taken one at a time across every process (an advisory
 * lock for this transaction), so a team never runs more than its share.
 */
export async function startQueued(db: Executor, perTeam: number): Promise<boolean> {
  await sql`select pg_advisory_xact_lock(hashtext('imports.start'))`.execute(db);
  const started = await db
    .updateTable("imports")
    .set({ status: "running", started_at: now(), updated_at: now() })
    .where("id", "=", (eb) =>
      eb
        .selectFrom("imports as q")
        .select("q.id")
        .where("q.status", "=", "queued")
        .where((eb) =>
          eb(
            eb.selectFrom("imports as r").select((eb) => eb.fn.countAll<number>().as("running")).whereRef("r.team_id", "=", "q.team_id").where("r.status", "=", "running"),
            "<",
            perTeam,
          ),
        )
        .orderBy("q.id")
        .limit(1),
    )
    .returning("id")
    .executeTakeFirst();
  return started !== undefined;
}

/** A chunk claimed to be merged, with what writing it needs: its store as authorized. */
export type ClaimedChunk = {
  import_id: number;
  seq: number;
  first_line: number;
  gaps: number[] | null;
  body: Buffer;
  attempts: number;
  kind: ImportKind;
  store_id: number;
  team_id: number;
  country: string | null;
  recovery_delay_seconds: number;
};

/**
 * Claims the next chunk of a running import not held by a live process (its
 * lease passed, or never taken), among the first `ahead` not yet merged of
 * its import: chunks merge in file order, and the ones after the next are
 * read meanwhile. Any process of any machine can take it (`SKIP LOCKED`).
 */
export async function claimChunk(db: Executor, holder: string, leaseSeconds: number, ahead: number): Promise<ClaimedChunk | undefined> {
  const result = await sql<ClaimedChunk>`
    with next as (
      select c.import_id, c.seq
      from import_chunks c join imports i on i.id = c.import_id
      where i.status = 'running' and c.seq < i.merged_chunks + ${ahead}
        and (c.claimed_until is null or c.claimed_until < now())
      order by c.import_id, c.seq
      limit 1
      for update of c skip locked
    )
    update import_chunks c
    set claimed_by = ${holder}, claimed_until = now() + make_interval(secs => ${leaseSeconds})
    from next, imports i, stores s
    where c.import_id = next.import_id and c.seq = next.seq and i.id = c.import_id and s.id = i.store_id
    returning c.import_id, c.seq, c.first_line, c.gaps, c.body, c.attempts, i.kind, i.store_id, i.team_id, s.country, s.recovery_delay_seconds`.execute(db);
  const [row] = result.rows;
  return row && { ...row, body: Buffer.from(row.body) };
}

/** Lets another process take a chunk this one holds (it waits for the chunks before it). */
export async function releaseChunk(db: Executor, importId: number, seq: number, holder: string): Promise<void> {
  await db.updateTable("import_chunks").set({ claimed_until: null }).where("import_id", "=", importId).where("seq", "=", seq).where("claimed_by", "=", holder).execute();
}

/** A chunk whose merge failed: tried again by any process after `retryInSeconds`. Answers how many times it has failed. */
export async function chunkFailed(db: Executor, importId: number, seq: number, retryInSeconds: number): Promise<number> {
  const row = await db
    .updateTable("import_chunks")
    .set((eb) => ({ attempts: eb("attempts", "+", 1), claimed_by: null, claimed_until: sql<Date>`now() + make_interval(secs => ${retryInSeconds})` }))
    .where("import_id", "=", importId)
    .where("seq", "=", seq)
    .returning("attempts")
    .executeTakeFirst();
  return row?.attempts ?? 0;
}

/** The key of a chunk's merge among the database's advisory locks. */
const mergeKey = (importId: number, seq: number) => sql`hashtextextended(${`import-merge:${importId}:${seq}`}, 0)`;

/** Held by a chunk's merge until its transaction ends: a merge begun beside it waits on it for its turn (`afterMergeOf`). */
export async function holdMerge(db: Executor, importId: number, seq: number): Promise<void> {
  await sql`select pg_advisory_xact_lock(${mergeKey(importId, seq)})`.execute(db);
}

/** Waits, in the database, until the merge of chunk `seq` (if one is running) has ended, committed or not. */
export async function afterMergeOf(db: Executor, importId: number, seq: number): Promise<void> {
  await sql`select pg_advisory_xact_lock_shared(${mergeKey(importId, seq)})`.execute(db);
}

/** The import's state, locked so that its chunks merge one at a time, in order (and never after a cancel). */
export function lockImport(db: Executor, importId: number) {
  return db.selectFrom("imports").select(["status", "merged_chunks", "chunks"]).where("id", "=", importId).forNoKeyUpdate().executeTakeFirst();
}

export type LineRefusal = { line: number; external_id: string | null; status: number; code: string; error: string; details: unknown };

/** A chunk merged: its refused lines kept, its counts added, the chunk dropped, and the import ended when it was the last. */
export async function chunkMerged(db: Executor, importId: number, seq: number, counts: { created: number; updated: number; failed: number }, refusals: readonly LineRefusal[]): Promise<void> {
  if (refusals.length > 0) {
    await db
      .insertInto("import_errors")
      .values(refusals.map((refusal) => ({ import_id: importId, ...refusal, details: refusal.details === undefined ? null : storableJson(refusal.details) })))
      .execute();
  }
  await db.deleteFrom("import_chunks").where("import_id", "=", importId).where("seq", "=", seq).execute();
  await db
    .updateTable("imports")
    .set((eb) => ({
      merged_chunks: eb("merged_chunks", "+", 1),
      created: eb("created", "+", counts.created),
      updated: eb("updated", "+", counts.updated),
      failed: eb("failed", "+", counts.failed),
      status: sql`case when merged_chunks + 1 >= chunks then 'succeeded' else status end`,
      finished_at: sql`case when merged_chunks + 1 >= chunks then now() else finished_at end`,
      updated_at: now(),
    }))
    .where("id", "=", importId)
    .execute();
}

/** An import the service could not finish: what was merged stays. */
export async function failImport(db: Executor, importId: number): Promise<void> {
  await db
    .updateTable("imports")
    .set({ status: "failed", error_code: "merge_failed", error: FAILURES.merge_failed, finished_at: now(), updated_at: now() })
    .where("id", "=", importId)
    .where("status", "in", ["queued", "running"])
    .execute();
  await db.deleteFrom("import_chunks").where("import_id", "=", importId).execute();
}

/**
 * Uploads whose server stopped saying they are alive (it died mid-way, and no
 * 202 was sent) fail as interrupted, and their chunks go.
 */
export async function failAbandonedUploads(db: Executor, staleSeconds: number): Promise<void> {
  const abandoned = await db
    .updateTable("imports")
    .set({ status: "failed", error_code: "upload_interrupted", error: FAILURES.upload_interrupted, finished_at: now(), updated_at: now() })
    .where("status", "=", "receiving")
    .where("updated_at", "<", sql<Date>`now() - make_interval(secs => ${staleSeconds})`)
    .returning("id")
    .execute();
  if (abandoned.length > 0) await db.deleteFrom("import_chunks").where("import_id", "in", abandoned.map((row) => row.id)).execute();
}

/** Keeps a receiving upload fresh, so it is not taken for abandoned. */
export async function touchUpload(db: Executor, importId: number): Promise<void> {
  await db.updateTable("imports").set({ updated_at: now() }).where("id", "=", importId).where("status", "=", "receiving").execute();
}
