import fs from "node:fs";
import http from "node:http";
import { createGzip } from "node:zlib";

/** Hostile import files, streamed as a client would send them, and a server process's memory as the kernel tells it. */
export const MiB = 1024 * 1024;

/**
 * What a server may hold above its resident size once started, with the
 * default settings, for uploads and the merges they start (docs/operations.md,
 * "Memory"): 3 U (C + L) + 24 K (C + L), and 32 MiB for the heap's own slack.
 */
export function uploadMemoryBound(settings = { uploadsAtOnce: 4, chunkBytes: MiB, lineBytes: MiB, merging: 2 }): number {
  const { uploadsAtOnce, chunkBytes, lineBytes, merging } = settings;
  return 3 * uploadsAtOnce * (chunkBytes + lineBytes) + 24 * merging * (chunkBytes + lineBytes) + 32 * MiB;
}

/** A process's peak resident size so far, in bytes (`VmHWM`). */
export const peakMemoryOf = (pid: number | undefined) => Number(/VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) * 1024;

export type Shop = { url: string; storeId: number; key: string };

/**
 * Streams what `pieces` makes as an import (gzipped on the way when asked), as
 * fast as the server reads it; `stopAfter` pieces, it stops sending and leaves
 * the request open. Answers the status (0: no answer) and the body.
 */
export function streamUpload(shop: Shop, kind: string, pieces: () => Iterable<string | Buffer>, options: { gzip?: boolean; stopAfter?: number } = {}) {
  return new Promise<{ status: number; body: Record<string, unknown> }>((resolve) => {
    const req = http.request(`${shop.url}/api/v1/stores/${shop.storeId}/imports?kind=${kind}`, {
      method: "POST",
      headers: { Authorization: `Bearer ${shop.key}`, "Content-Type": "application/x-ndjson", ...(options.gzip ? { "Content-Encoding": "gzip" } : {}) },
    });
    req.on("response", (res) => {
      let text = "";
      res.on("data", (data: Buffer) => (text += data.toString()));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as Record<string, unknown> }));
    });
    req.on("error", () => resolve({ status: 0, body: {} }));
    const gzip = options.gzip ? createGzip({ level: 1 }) : undefined;
    gzip?.pipe(req);
    const into = gzip ?? req;
    void (async () => {
      let sent = 0;
      for (const piece of pieces()) {
        if (req.destroyed) return;
        if (!into.write(piece)) await new Promise((resolve) => into.once("drain", resolve));
        if (options.stopAfter !== undefined && ++sent >= options.stopAfter) return;
      }
      into.end();
    })();
  });
}

const order = (i: number, extra = "") => `{"external_id":"o-${i}","placed_at":"2024-01-01T00:00:00Z","total_price":1,"customer":{"external_id":"c-1","phone":"+14155550100"}${extra}}\n`;

/** One order, then `mib` MiB of bare newlines. */
export const blankLines = (mib: number) =>
  function* () {
    yield order(1);
    const newlines = Buffer.alloc(MiB, 10);
    for (let i = 0; i < mib; i++) yield newlines;
  };

/** `count` orders of `bytes` each (a long note, which the API ignores). */
export const longLines = (count: number, bytes: number) =>
  function* () {
    for (let i = 0; i < count; i++) {
      const head = order(i, ',"note":"').slice(0, -2);
      yield `${head}${"x".repeat(bytes - head.length - 3)}"}\n`;
    }
  };
