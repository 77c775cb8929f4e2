import { deflateRawSync } from "node:zlib";
import { IMPORT_KINDS, importErrorSchema, importListSchema, importSchema, LIMITS, type Import, type ImportError, type ImportFailure } from "@commerce-ingest/shared";
import { z } from "zod";
import { AppError } from "../errors.js";
import { STORE_ERRORS, storeParams, storeProcedure } from "../records/procedures.js";
import { rest, router } from "../trpc.js";
import type { Context } from "../context.js";
import type { StoreContext } from "../tenancy/access.js";
import * as repo from "./import.repository.js";
import { toImport } from "./import.view.js";
import { IMPORT_WRITES } from "./kinds.js";
import { checkLine, linesOf, type CheckedLine } from "./lines.js";
import { chunksOf, mostSentBytes, paced, uploadBody, type Received, type ReceivedChunk } from "./upload.js";

const importQuery = storeParams.extend({ kind: z.enum(IMPORT_KINDS).meta({ description: "What each line holds: `orders`, `customers`, `checkouts` or `shipments`.", example: "orders" }) });
const importParams = storeParams.extend({ import_id: z.coerce.number().int().positive().meta({ description: "The import's id (a positive integer; anything else is `422 validation_failed`)", example: 42 }) });

/** Lines of the file's start checked before anything is stored: a file that is not of its kind fails at once. */
const SAMPLE_LINES = 100;
/** The imports a list shows. */
const LIST_LIMIT = 50;

/** Media types an import's body may be sent as (NDJSON, also known as JSON Lines). */
const NDJSON_TYPES = new Set(["application/x-ndjson", "application/ndjson", "application/jsonl", "application/x-jsonlines"]);

/**
 * The file's first chunk, checked before anything is stored: its first line
 * must be a JSON object, and one of its first lines a record of the import's
 * kind; else the whole file is refused (422) with what the first lines held.
 * Lines are read until the first record, so a hostile start costs at most
 * `SAMPLE_LINES` lines, or a line's worth of bytes, of parsing.
 */
function checkStart(chunk: ReceivedChunk, kind: Import["kind"], store: StoreContext, sampleBytes: number): void {
  const sampled: CheckedLine[] = [];
  let bytes = 0;
  for (const { line, text } of linesOf(chunk.text, chunk.firstLine, chunk.gaps)) {
    const item = checkLine(IMPORT_WRITES[kind], text, store.country);
    sampled.push({ line, item });
    bytes += text.length;
    if (!item.refused || sampled.length >= SAMPLE_LINES || bytes >= sampleBytes) break;
  }
  const [first] = sampled;
  const notJson = first?.item.refused && first.item.refused.code !== "validation_failed";
  const notObject = first?.item.refused?.details?.some((detail) => detail.path === "" && detail.message === "must be a JSON object");
  if (first && !notJson && !notObject && sampled.some((line) => !line.item.refused)) return;
  const details = sampled.slice(0, 5).flatMap(({ line, item }) =>
    item.refused ? (item.refused.details ?? [{ path: "", message: item.refused.error ?? "refused" }]).map((detail) => ({ path: `line ${line}${detail.path ? `: ${detail.path}` : ""}`, message: detail.message })) : [],
  );
  const summary = notJson || notObject ? `line ${first?.line ?? 1} is not a JSON object` : `none of the first ${sampled.length} lines is a valid record of ${kind}`;
  throw new AppError("IMPORT_FILE_INVALID", [{ path: "", message: summary }, ...details.slice(0, 20)]);
}

/** `Content-Encoding` as a list: the file sent as it is (`[]`), or gzipped once. */
function isGzipped(header: string | undefined): boolean {
  const codings = (header ?? "")
    .split(",")
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== "" && coding !== "identity");
  if (codings.length === 0) return false;
  if (codings.length === 1 && (codings[0] === "gzip" || codings[0] === "x-gzip")) return true;
  throw new AppError("UNSUPPORTED_CONTENT_ENCODING");
}

/** What ended an upload before its 202, as the code its failed import keeps and the error its client gets. */
function uploadFailure(error: unknown): { code: ImportFailure; answer: unknown } {
  if (error instanceof AppError) {
    if (error.code === "REQUEST_TIMEOUT") return { code: "request_timeout", answer: error };
    if (error.code === "IMPORT_TOO_LARGE") return { code: "import_too_large", answer: error };
    if (error.code === "IMPORT_FILE_INVALID") return { code: "import_file_invalid", answer: error };
  }
  // A gzip stream that is not gzip: the file cannot be read.
  if (error instanceof Error && "code" in error && typeof error.code === "string" && error.code.startsWith("Z_")) {
    return { code: "import_file_invalid", answer: new AppError("IMPORT_FILE_INVALID", [{ path: "", message: "the body is not valid gzip" }]) };
  }
  // The client went away mid-way (or the database did: that answer stays a 503).
  if (error instanceof Error && "code" in error && (error.code === "ECONNRESET" || error.code === "ERR_STREAM_PREMATURE_CLOSE")) {
    return { code: "upload_interrupted", answer: new AppError("UPLOAD_INTERRUPTED") };
  }
  return { code: "upload_interrupted", answer: error };
}

/**
 * Receives the file whole, chunk by chunk into the database, before answering:
 * once answered, the client may forget it. The import exists from its first
 * chunk on (a file refused on its first lines leaves nothing); from then on an
 * upload that ends without its 202 leaves it `failed`, with why.
 */
async function receive(ctx: Context & { store: StoreContext }, kind: Import["kind"]): Promise<Import> {
  const upload = ctx.upload;
  const settings = ctx.imports;
  if (!upload || !settings) throw new Error("an upload without its request");
  const mediaType = (upload.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
  if (!NDJSON_TYPES.has(mediaType)) throw new AppError("IMPORT_MEDIA_TYPE");
  const gzipped = isGzipped(upload.headers["content-encoding"]);
  // A declared length no file of the limit can have, gzipped or not, is refused unread.
  if (Number(upload.headers["content-length"] ?? 0) > mostSentBytes(settings.uploadLimitBytes)) throw new AppError("IMPORT_TOO_LARGE");
  const release = settings.slots.take();
  if (!release) throw new AppError("UPLOADS_BUSY", undefined, { "Retry-After": "5" });

  const received: Received = { bytes: 0 };
  const body = uploadBody(upload, gzipped, received, settings.uploadLimitBytes);
  const limits = { limitBytes: settings.uploadLimitBytes, lineBytes: settings.lineBytes, chunkLines: LIMITS.importChunkLines, chunkBytes: settings.chunkBytes };
  let id: number | undefined;
  let heartbeat: NodeJS.Timeout | undefined;
  let lines = 0;
  let chunks = 0;
  try {
    for await (const chunk of chunksOf(paced(body, received, settings.pace), limits)) {
      if (id === undefined) {
        checkStart(chunk, kind, ctx.store, settings.lineBytes);
        ({ id } = await repo.createImport(ctx.db, { storeId: ctx.store.id, teamId: ctx.store.teamId, keyId: ctx.response.authorized?.keyId, kind }));
        const receiving = id;
        heartbeat = setInterval(() => void repo.touchUpload(ctx.db, receiving).catch(() => undefined), settings.heartbeatMs);
      }
      await repo.appendChunk(ctx.db, id, { seq: chunk.seq, firstLine: chunk.firstLine, lines: chunk.lines, gaps: chunk.gaps, body: deflateRawSync(chunk.text, { level: 1 }) });
      lines += chunk.lines;
      chunks++;
      settings.slots.stored();
    }
    if (id === undefined) throw new AppError("IMPORT_FILE_INVALID", [{ path: "", message: "the file holds no record" }]);
    const row = await repo.finishUpload(ctx.db, id, { lines, chunks, bytes: received.bytes });
    // Its heartbeat could not reach the database for so long that it was taken for abandoned.
    if (!row) throw new AppError("UPLOAD_INTERRUPTED");
    settings.nudge?.();
    return toImport(row);
  } catch (error) {
    body.destroy();
    upload.unpipe();
    const failure = uploadFailure(error);
    if (id !== undefined) await repo.failUpload(ctx.db, id, failure.code, { lines, chunks, bytes: received.bytes }).catch(() => undefined);
    throw failure.answer;
  } finally {
    clearInterval(heartbeat);
    release();
  }
}

async function findOrThrow(ctx: Context & { store: StoreContext }, importId: number) {
  const row = await repo.findImport(ctx.db, ctx.store.id, importId);
  if (!row) throw new AppError("IMPORT_NOT_FOUND");
  return row;
}

/** An import's refused lines, a page of them at a time from the database, as NDJSON. */
async function* errorLines(ctx: Context, importId: number): AsyncGenerator<ImportError> {
  let after = 0;
  for (;;) {
    const page = await repo.importErrors(ctx.db, importId, after, 1000);
    for (const row of page) {
      yield { line: row.line, external_id: row.external_id, status: row.status, code: row.code, error: row.error, ...(row.details ? { details: row.details as ImportError["details"] } : {}) };
    }
    const last = page.at(-1);
    if (!last || page.length < 1000) return;
    after = last.line;
  }
}

const EXAMPLE_LINES = [
  '{"external_id":"1001","placed_at":"2024-03-02T10:00:00Z","total_price":42.5,"customer":{"external_id":"c-7","phone":"+14155552671"}}',
  '{"external_id":"1002","placed_at":"2024-03-02T11:30:00Z","total_price":18,"currency":"USD"}',
].join("\n");

export const importRouter = router({
  create: storeProcedure
    .meta(rest({
        method: "POST",
        path: "/api/v1/stores/{store_id}/imports",
        tags: ["imports"],
        summary: "Import a file of records (a shop's history)",
        description:
          "The body is NDJSON: one record per line, each in the shape of that kind's upsert body (blank lines are skipped), optionally sent with `Content-Encoding: gzip`. " +
          "It is streamed, never held whole; the file may be up to 1 GiB uncompressed (`IMPORT_LIMIT_BYTES`). Answers `202 Accepted` once the whole file is durably stored: the client may then forget it. " +
          "The import then runs on its own (`GET .../imports/{import_id}` shows its progress): each line is stored as a push of it with `X-Backfill: true` would be (customers, contacts, merge rules, source times, stale writes), " +
          "triggering no automation, in file order, so the last line for a key wins. A line that a push would refuse is counted and listed (`.../errors`), never stopping the rest. " +
          "A file whose first line is not a JSON object, or whose first lines hold no valid record of the kind, is refused at once (422) and nothing is stored. " +
          "The upload must keep coming: silent for `REQUEST_TIMEOUT_MS` (30 s), slower than `IMPORT_UPLOAD_MIN_BYTES_PER_SECOND` over that long, or longer than `IMPORT_UPLOAD_TIMEOUT_MS` in all, it is answered `408`. " +
          "An upload that ends without its `202` once its first lines were stored (cut off, too slow, too large, a broken gzip stream) leaves the import `failed`, with `error_code` saying why. " +
          "A server receives a few files at once (`IMPORT_UPLOADS_AT_ONCE`); past them it answers `503 uploads_busy` with `Retry-After`, before reading any. " +
          "A team runs a few imports at once (`IMPORTS_PER_TEAM`); the others wait, `queued`. It costs one request of the rate limit.",
        protect: true,
      }, {
        success: { 202: "Received whole: the import is queued. `Location` names it." },
        errors: [...STORE_ERRORS, "VALIDATION_FAILED", "IMPORT_MEDIA_TYPE", "UNSUPPORTED_CONTENT_ENCODING", "IMPORT_FILE_INVALID", "IMPORT_TOO_LARGE", "REQUEST_TIMEOUT", "UPLOAD_INTERRUPTED", "UPLOADS_BUSY"],
        upload: { mediaType: "application/x-ndjson", description: "One record per line, as the kind's upsert body takes it (here, orders).", example: `${EXAMPLE_LINES}\n`, query: importQuery },
      }))
    .input(importQuery)
    .output<z.ZodType<object, object>>(importSchema)
    .mutation(async ({ ctx, input }) => {
      const created = await receive(ctx, input.kind);
      ctx.response.status = 202;
      ctx.response.headers = { ...ctx.response.headers, Location: `/api/v1/stores/${ctx.store.id}/imports/${created.id}` };
      return created;
    }),

  list: storeProcedure
    .meta(rest({ method: "GET", path: "/api/v1/stores/{store_id}/imports", tags: ["imports"], summary: "The store's recent imports", description: `The store's ${LIST_LIMIT} latest imports, newest first.`, protect: true }, { success: { 200: "The store's recent imports" }, errors: STORE_ERRORS }))
    .input(storeParams)
    .output<z.ZodType<object, object>>(importListSchema)
    .query(async ({ ctx }) => {
      const at = new Date();
      return { data: (await repo.listImports(ctx.db, ctx.store.id, LIST_LIMIT)).map((row) => toImport(row, at)) };
    }),

  get: storeProcedure
    .meta(rest({
        method: "GET",
        path: "/api/v1/stores/{store_id}/imports/{import_id}",
        tags: ["imports"],
        summary: "An import's status and counts",
        description: "Poll it until `status` is `succeeded`, `failed` or `cancelled`. `processed` counts lines merged or refused; `records_per_second` the pace since it started.",
        protect: true,
      }, { success: { 200: "The import" }, errors: [...STORE_ERRORS, "VALIDATION_FAILED", "IMPORT_NOT_FOUND"] }))
    .input(importParams)
    .output<z.ZodType<object, object>>(importSchema)
    .query(async ({ ctx, input }) => toImport(await findOrThrow(ctx, input.import_id))),

  errors: storeProcedure
    .meta(rest({
        method: "GET",
        path: "/api/v1/stores/{store_id}/imports/{import_id}/errors",
        tags: ["imports"],
        summary: "An import's refused lines (NDJSON)",
        description: "One line per refused record, in file order: its line number, its `external_id`, and what a push of it alone would have answered (`status`, `code`, `error`, `details`).",
        protect: true,
      }, { success: { 200: "The refused lines, one JSON object per line" }, errors: [...STORE_ERRORS, "VALIDATION_FAILED", "IMPORT_NOT_FOUND"], stream: { mediaType: "application/x-ndjson", item: importErrorSchema } }))
    .input(importParams)
    .output<z.ZodType<object, object>>(z.looseObject({}))
    .query(async ({ ctx, input }) => {
      const row = await findOrThrow(ctx, input.import_id);
      return { lines: errorLines(ctx, row.id) };
    }),

  cancel: storeProcedure
    .meta(rest({
        method: "DELETE",
        path: "/api/v1/stores/{store_id}/imports/{import_id}",
        tags: ["imports"],
        summary: "Cancel an import",
        description: "Stops a queued or running import: the chunks not merged yet are dropped; what was merged stays merged. Answers the import, `cancelled`.",
        protect: true,
      }, { success: { 200: "Cancelled" }, errors: [...STORE_ERRORS, "VALIDATION_FAILED", "IMPORT_NOT_FOUND", "IMPORT_FINISHED"] }))
    .input(importParams)
    .output<z.ZodType<object, object>>(importSchema)
    .mutation(async ({ ctx, input }) => {
      const cancelled = await repo.cancelImport(ctx.db, ctx.store.id, input.import_id);
      if (cancelled) return toImport(cancelled);
      await findOrThrow(ctx, input.import_id);
      throw new AppError("IMPORT_FINISHED");
    }),
});
