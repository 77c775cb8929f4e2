import { Transform, type Readable } from "node:stream";
import { createGunzip } from "node:zlib";
import type { UploadPace, UploadSlots } from "../context.js";
import { AppError } from "../errors.js";
import { isBlankByte } from "./lines.js";

export type { UploadPace, UploadSlots } from "../context.js";

/**
 * Whole lines of an import's file, as received, blank ones left out: `lines`
 * of them, the first being the file's line `firstLine` (from 1), and `gaps`
 * where blank lines were left out (see `linesOf`). `text` is valid until the
 * next chunk is asked for: the reader reuses its memory.
 */
export type ReceivedChunk = { seq: number; firstLine: number; lines: number; text: Buffer; gaps: number[] | null };

export type UploadLimits = {
  /** The most bytes the file may hold, uncompressed. */
  limitBytes: number;
  /** The most bytes one line may hold (a push's body limit). */
  lineBytes: number;
  /** Records per chunk. */
  chunkLines: number;
  /** Bytes per chunk: a chunk ends at the first line that reaches it, so it holds at most `chunkBytes + lineBytes`. */
  chunkBytes: number;
};

/**
 * How often a receiving upload tells the database it is alive, for a staleness
 * of `staleSeconds`: four and a half times in that span, so a slow statement
 * or two never makes a live upload look dead.
 */
export const heartbeatOf = (staleSeconds: number) => Math.round((staleSeconds * 1000) / 4.5);

/**
 * The most bytes a file of `limitBytes` can take as sent, gzipped or not
 * (gzip adds a few bytes per 32 KiB stored): more is not a file of the limit.
 */
export const mostSentBytes = (limitBytes: number) => limitBytes + Math.ceil(limitBytes / 1024) + 64 * 1024;

/** Bytes as sent (compressed when sent so). */
export type Received = { bytes: number };

/** gzip's first two bytes: a body that starts with them was sent compressed. */
const isGzip = (data: Buffer) => data[0] === 0x1f && data[1] === 0x8b;

/**
 * The body of an upload, as the client sent it: gunzipped when sent with
 * `Content-Encoding: gzip`, its bytes as sent counted in `received`. More
 * bytes sent than the file may hold uncompressed (a gzip header that never
 * ends, say) is a file too large: 413.
 */
export function uploadBody(request: Readable, gzipped: boolean, received: Received, limitBytes: number): Readable {
  const mostSent = mostSentBytes(limitBytes);
  const counted = request.pipe(
    new Transform({
      transform(chunk: Buffer, _encoding, done) {
        received.bytes += chunk.length;
        done(received.bytes > mostSent ? new AppError("IMPORT_TOO_LARGE") : null, chunk);
      },
    }),
  );
  request.once("error", (error) => counted.destroy(error));
  if (!gzipped) return counted;
  const gunzip = createGunzip();
  counted.once("error", (error) => gunzip.destroy(error));
  // Its error reaches the reader (the upload then fails); nothing else need hear it.
  gunzip.on("error", () => undefined);
  return counted.pipe(gunzip);
}

/**
 * The body's data as the reader asks for it, cut with 408 when the client is
 * too slow: when nothing came for `silenceMs`, or less than
 * `minBytesPerSecond` over a window of `windowMs`, of the time the reader spent
 * waiting for it; or when the upload has taken `totalMs` in all. Bytes count
 * as sent or as read, whichever came faster (a gzipped file of blank lines
 * sends little and reads much). The time the service spends on what it read
 * (storing a chunk) is its own, never the client's: a client held back by the
 * service is never cut for it.
 */
export async function* paced(body: Readable, received: Received, pace: UploadPace): AsyncGenerator<Buffer> {
  const started = performance.now();
  const iterator = body[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  let read = 0;
  let waitingSince: number | undefined;
  let last = { sent: received.bytes, read };
  let silentMs = 0;
  let windowMs = 0;
  let windowStart = last;

  /** Adds the time waited since the last look; true when the client is too slow. */
  const tooSlow = (now: number): boolean => {
    if (now - started >= pace.totalMs) return true;
    if (waitingSince === undefined) return false;
    const waited = now - waitingSince;
    waitingSince = now;
    if (received.bytes === last.sent && read === last.read) silentMs += waited;
    else {
      last = { sent: received.bytes, read };
      silentMs = 0;
    }
    if (silentMs >= pace.silenceMs) return true;
    windowMs += waited;
    if (windowMs < pace.windowMs) return false;
    if (Math.max(received.bytes - windowStart.sent, read - windowStart.read) < (pace.minBytesPerSecond * windowMs) / 1000) return true;
    windowMs = 0;
    windowStart = { sent: received.bytes, read };
    return false;
  };
  const timer = setInterval(() => {
    if (tooSlow(performance.now())) body.destroy(new AppError("REQUEST_TIMEOUT"));
  }, Math.max(10, Math.min(1_000, pace.silenceMs / 4, pace.windowMs / 4)));
  try {
    for (;;) {
      waitingSince = performance.now();
      const next = await iterator.next();
      if (!next.done) read += next.value.length;
      if (tooSlow(performance.now())) throw new AppError("REQUEST_TIMEOUT");
      waitingSince = undefined;
      if (next.done) return;
      yield next.value;
    }
  } finally {
    clearInterval(timer);
  }
}

/**
 * Reads an NDJSON stream as chunks of whole lines, holding at most one chunk
 * and the line in progress: `chunkBytes + lineBytes` at most, in one buffer
 * reused from chunk to chunk, whatever the stream's own buffers were. Blank
 * lines are never held: they are counted, and where a run of them was left
 * out of a chunk its place and length go in the chunk's `gaps`. Past
 * `limitBytes` uncompressed (a gzip bomb included), or a line over
 * `lineBytes`, it stops with 413; a file that starts as gzip is refused (422).
 */
export async function* chunksOf(body: AsyncIterable<Buffer>, limits: UploadLimits): AsyncGenerator<ReceivedChunk> {
  const most = limits.chunkBytes + limits.lineBytes;
  let held = Buffer.allocUnsafe(Math.min(64 * 1024, most));
  let used = 0; // bytes of the chunk's whole lines and of the line in progress
  let seq = 0;
  let line = 1; // the file's number of the line in progress
  let lineBytes = 0; // its bytes so far, blank ones included
  let inLine = false; // whether it holds more than blanks (its bytes are then being held)
  let blankRun = 0; // blank lines since the chunk's last line
  let firstLine = 1;
  let lines = 0;
  let gaps: number[] = [];
  let total = 0;

  const tooLong = () => new AppError("IMPORT_TOO_LARGE", [{ path: `line ${line}`, message: `is over ${limits.lineBytes} bytes` }]);
  const hold = (data: Buffer, start: number, end: number) => {
    if (used + end - start > held.length) {
      const grown = Buffer.allocUnsafe(Math.min(most, Math.max(held.length * 2, used + end - start)));
      held.copy(grown, 0, 0, used);
      held = grown;
    }
    used += data.copy(held, used, start, end);
  };
  /** The line in progress is whole: it joins the chunk, after the blank lines before it. */
  const endLine = () => {
    if (lines === 0) firstLine = line;
    else if (blankRun > 0) gaps.push(lines, blankRun);
    lines++;
    blankRun = 0;
    line++;
    lineBytes = 0;
    inLine = false;
  };
  const take = (): ReceivedChunk => {
    const chunk = { seq: seq++, firstLine, lines, text: held.subarray(0, used), gaps: gaps.length > 0 ? gaps : null };
    used = 0;
    lines = 0;
    gaps = [];
    return chunk;
  };

  for await (const data of body) {
    if (total === 0 && isGzip(data)) {
      throw new AppError("IMPORT_FILE_INVALID", [{ path: "", message: "the file is gzip-compressed: send it with `Content-Encoding: gzip` (once)" }]);
    }
    total += data.length;
    if (total > limits.limitBytes) throw new AppError("IMPORT_TOO_LARGE");
    let start = 0;
    while (start < data.length) {
      if (!inLine) {
        // Blanks are only counted: a file of newlines holds nothing.
        let i = start;
        for (; i < data.length; i++) {
          const byte = data[i];
          if (byte === 0x0a) {
            blankRun++;
            line++;
            lineBytes = 0;
          } else if (isBlankByte(byte)) {
            if (++lineBytes > limits.lineBytes) throw tooLong();
          } else break;
        }
        start = i;
        if (start === data.length) break;
        inLine = true;
      }
      const newline = data.indexOf(0x0a, start);
      const end = newline === -1 ? data.length : newline + 1;
      lineBytes += end - start;
      if (lineBytes > limits.lineBytes) throw tooLong();
      hold(data, start, end);
      start = end;
      if (newline === -1) break;
      endLine();
      if (lines >= limits.chunkLines || used >= limits.chunkBytes) yield take();
    }
  }
  // A last line without its newline.
  if (inLine) endLine();
  if (lines > 0) yield take();
}

/**
 * Uploads a process receives at once (see `IMPORT_UPLOADS_AT_ONCE`): each
 * takes a slot, and none is read without one. Counts the chunks stored too, for
 * the metrics.
 */
export function uploadSlots(most: number): UploadSlots {
  let busy = 0;
  let chunks = 0;
  return {
    take() {
      if (busy >= most) return undefined;
      busy++;
      let freed = false;
      return () => {
        if (freed) return;
        freed = true;
        busy--;
      };
    },
    get busy() {
      return busy;
    },
    get chunks() {
      return chunks;
    },
    stored() {
      chunks++;
    },
  };
}
