import { Transform, type Readable } from "node:stream";
import { createGunzip } from "node:zlib";
import { AppError } from "../errors.js";

/** Whole lines of an import's file, as received: `lines` of them not blank, the first being the file's line `firstLine` (from 1). */
export type ReceivedChunk = { seq: number; firstLine: number; lines: number; text: Buffer };

export type UploadLimits = {
  /** The most bytes the file may hold, uncompressed. */
  limitBytes: number;
  /** The most bytes one line may hold (a push's body limit). */
  lineBytes: number;
  /** Records per chunk. */
  chunkLines: number;
};

/** A line that holds nothing but spaces, tabs or a carriage return: skipped, still counted for line numbers. */
export function isBlank(text: Buffer, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const byte = text[i];
    if (byte !== 0x20 && byte !== 0x09 && byte !== 0x0d) return false;
  }
  return true;
}

/**
 * The body of an upload, as the client sent it: gunzipped when sent with
 * `Content-Encoding: gzip`, and its bytes as sent counted in `received`.
 */
export function uploadBody(request: Readable, encoding: string | undefined, received: { bytes: number }): Readable {
  const counted = request.pipe(
    new Transform({
      transform(chunk: Buffer, _encoding, done) {
        received.bytes += chunk.length;
        done(null, chunk);
      },
    }),
  );
  request.once("error", (error) => counted.destroy(error));
  if (encoding === "gzip" || encoding === "x-gzip") {
    const gunzip = createGunzip();
    counted.once("error", (error) => gunzip.destroy(error));
    // Its error reaches the reader (the upload then fails); nothing else need hear it.
    gunzip.on("error", () => undefined);
    return counted.pipe(gunzip);
  }
  return counted;
}

/**
 * Reads an NDJSON stream as chunks of whole lines, holding at most one chunk
 * (and one line) in memory: the next is read only when the caller asks for it.
 * Past `limitBytes` uncompressed (a gzip bomb included), or a line over
 * `lineBytes`, it stops with 413.
 */
export async function* chunksOf(body: AsyncIterable<Buffer>, limits: UploadLimits): AsyncGenerator<ReceivedChunk> {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let seq = 0;
  let line = 1; // the file's number of the next line to start
  let chunkFirstLine = 1;
  let chunkLines = 0;
  let chunkParts: Buffer[] = [];
  let chunkBytes = 0;
  let total = 0;

  const take = (): ReceivedChunk => {
    const chunk = { seq: seq++, firstLine: chunkFirstLine, lines: chunkLines, text: Buffer.concat(chunkParts, chunkBytes) };
    chunkParts = [];
    chunkBytes = 0;
    chunkLines = 0;
    chunkFirstLine = line;
    return chunk;
  };

  for await (const data of body) {
    total += data.length;
    if (total > limits.limitBytes) throw new AppError("IMPORT_TOO_LARGE");
    let start = 0;
    for (let end = data.indexOf(10); end !== -1; end = data.indexOf(10, start)) {
      const tail = data.subarray(start, end + 1);
      const whole = pending.length === 0 ? tail : Buffer.concat([...pending, tail]);
      pending = [];
      pendingBytes = 0;
      if (whole.length > limits.lineBytes) throw new AppError("IMPORT_TOO_LARGE", [{ path: `line ${line}`, message: `is over ${limits.lineBytes} bytes` }]);
      chunkParts.push(whole);
      chunkBytes += whole.length;
      if (!isBlank(whole, 0, whole.length - 1)) chunkLines++;
      line++;
      start = end + 1;
      if (chunkLines >= limits.chunkLines) yield take();
    }
    if (start < data.length) {
      const rest = data.subarray(start);
      pendingBytes += rest.length;
      if (pendingBytes > limits.lineBytes) throw new AppError("IMPORT_TOO_LARGE", [{ path: `line ${line}`, message: `is over ${limits.lineBytes} bytes` }]);
      // A copy: the stream may reuse its buffer.
      pending.push(Buffer.from(rest));
    }
  }
  // A last line without its newline.
  if (pendingBytes > 0) {
    const whole = Buffer.concat(pending, pendingBytes);
    chunkParts.push(whole);
    chunkBytes += whole.length;
    if (!isBlank(whole, 0, whole.length)) chunkLines++;
    line++;
  }
  if (chunkLines > 0) yield take();
}

/** The lines of a chunk, numbered as in the file, blank ones left out. */
export function* linesOf(text: Buffer, firstLine: number): Generator<{ line: number; text: Buffer }> {
  let line = firstLine;
  let start = 0;
  while (start < text.length) {
    let end = text.indexOf(10, start);
    if (end === -1) end = text.length;
    if (!isBlank(text, start, end)) yield { line, text: text.subarray(start, end) };
    line++;
    start = end + 1;
  }
}
