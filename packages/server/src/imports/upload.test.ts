import { PassThrough, Readable, Transform } from "node:stream";
import { describe, expect, it } from "vitest";
import { AppError } from "../errors.js";
import { linesOf } from "./lines.js";
import { chunksOf, paced, uploadSlots, type UploadLimits } from "./upload.js";

const LIMITS: UploadLimits = { limitBytes: 1 << 30, lineBytes: 1024, chunkLines: 3, chunkBytes: 64 };

/** Every chunk of a stream given in pieces, with its lines read back as the runner reads them. */
async function read(pieces: Array<string | Buffer>, limits: UploadLimits = LIMITS) {
  const chunks = [];
  for await (const chunk of chunksOf(Readable.from(pieces.map((piece) => Buffer.from(piece))), limits)) {
    const lines = [...linesOf(chunk.text, chunk.firstLine, chunk.gaps)].map(({ line, text }) => [line, text.toString()]);
    // The text is reused for the next chunk: what is kept of it is a copy.
    chunks.push({ seq: chunk.seq, lines: chunk.lines, held: chunk.text.length, read: lines });
  }
  return chunks;
}

const codeOf = (error: unknown) => (error instanceof AppError ? error.code : error);

describe("an upload's chunks", () => {
  it("keep every line's number while holding no blank line", async () => {
    const chunks = await read(['{"a":1}\n\n  \n\t\r\n{"a":2}', '\n\n\n{"a":3}\n', "\n\n", '{"a":4}\n\n\n{"a":5}', "\n   \n"]);
    expect(chunks.map((chunk) => chunk.read)).toEqual([
      [
        [1, '{"a":1}'],
        [5, '{"a":2}'],
        [8, '{"a":3}'],
      ],
      [
        [11, '{"a":4}'],
        [14, '{"a":5}'],
      ],
    ]);
    // Only the records' own bytes are held.
    expect(chunks.map((chunk) => chunk.held)).toEqual([24, 16]);
  });

  it("hold nothing for a file of blank lines, however long", async () => {
    const newlines = Buffer.alloc(1 << 20, 10);
    const pieces = ['{"a":1}\n', ...Array.from({ length: 64 }, () => newlines), '   {"a":2}'];
    expect((await read(pieces)).map((chunk) => chunk.read)).toEqual([
      [
        [1, '{"a":1}'],
        [2 + 64 * (1 << 20), '{"a":2}'],
      ],
    ]);
  });

  it("end a chunk at the line that reaches its bytes, as well as at its count of lines", async () => {
    const line = `{"a":"${"x".repeat(40)}"}\n`;
    const chunks = await read([line.repeat(5)]);
    expect(chunks.map((chunk) => chunk.lines)).toEqual([2, 2, 1]);
    expect(Math.max(...chunks.map((chunk) => chunk.held))).toBeLessThanOrEqual(LIMITS.chunkBytes + LIMITS.lineBytes);
  });

  it("refuse a line over its limit, blank or not, and a file over its own", async () => {
    await expect(read([`{"a":"${"x".repeat(2000)}"}\n`])).rejects.toMatchObject({ code: "IMPORT_TOO_LARGE", details: [{ path: "line 1", message: "is over 1024 bytes" }] });
    await expect(read(["{}\n", " ".repeat(600), " ".repeat(600), "\n"])).rejects.toMatchObject({ code: "IMPORT_TOO_LARGE", details: [{ path: "line 2" }] });
    await expect(read(["{}\n".repeat(100)], { ...LIMITS, limitBytes: 200 })).rejects.toMatchObject({ code: "IMPORT_TOO_LARGE" });
  });

  it("refuse a file sent gzipped without saying so", async () => {
    await expect(read([Buffer.from([0x1f, 0x8b, 8, 0, 0, 0])])).rejects.toMatchObject({ code: "IMPORT_FILE_INVALID" });
  });
});

describe("an upload's pace", () => {
  const pace = { silenceMs: 40, windowMs: 200, minBytesPerSecond: 1000, totalMs: 60_000 };

  /** Reads the source as an upload is read: its bytes counted as they come, before the reader takes them. */
  async function drain(source: Readable, options = pace, work?: () => Promise<void>) {
    const received = { bytes: 0 };
    const body = source.pipe(
      new Transform({
        transform(data: Buffer, _encoding, done) {
          received.bytes += data.length;
          done(null, data);
        },
      }),
    );
    let bytes = 0;
    for await (const data of paced(body, received, options)) {
      bytes += data.length;
      await work?.();
    }
    return bytes;
  }

  it("cuts a client that falls silent with 408", async () => {
    const body = new PassThrough();
    body.write("{}\n");
    await expect(drain(body).catch(codeOf)).resolves.toBe("REQUEST_TIMEOUT");
  });

  it("cuts a client that trickles under the minimum rate, though never silent", async () => {
    const body = new PassThrough();
    const trickle = setInterval(() => body.write("x"), 5);
    try {
      await expect(drain(body, { ...pace, silenceMs: 10_000 }).catch(codeOf)).resolves.toBe("REQUEST_TIMEOUT");
    } finally {
      clearInterval(trickle);
    }
  });

  it("takes bytes read as progress when few are sent (a gzipped file of blank lines)", async () => {
    // 64 KiB read for each byte sent, a piece every 5 ms: the bytes sent alone would be far under the rate.
    const source = new PassThrough();
    const received = { bytes: 0 };
    let pieces = 0;
    const feed = setInterval(() => {
      received.bytes += 1;
      if (++pieces > 80) source.end();
      else source.write(Buffer.alloc(64 * 1024, 10));
    }, 5);
    let bytes = 0;
    try {
      for await (const data of paced(source, received, { ...pace, silenceMs: 10_000, windowMs: 100 })) bytes += data.length;
    } finally {
      clearInterval(feed);
    }
    expect(bytes).toBe(80 * 64 * 1024);
  });

  it("never counts the time the service spends on what it read against the client", async () => {
    // Every piece is there at once; the reader takes longer than the silence allows over each.
    const pieces = Array.from({ length: 4 }, () => Buffer.alloc(4096, 0x20));
    const slowWork = () => new Promise<void>((resolve) => setTimeout(resolve, 3 * pace.silenceMs));
    await expect(drain(Readable.from(pieces, { highWaterMark: 1 }), pace, slowWork)).resolves.toBe(4 * 4096);
  });
});

describe("upload slots", () => {
  it("give out at most their number, each freed once", () => {
    const slots = uploadSlots(2);
    const [a, b, c] = [slots.take(), slots.take(), slots.take()];
    expect([a, b, c].map(Boolean)).toEqual([true, true, false]);
    a?.();
    a?.();
    expect(slots.busy).toBe(1);
    expect(slots.take()).toBeDefined();
    expect(slots.take()).toBeUndefined();
  });
});
