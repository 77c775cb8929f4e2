#!/usr/bin/env node
import { createReadStream, createWriteStream, statSync } from "node:fs";
import { open } from "node:fs/promises";
import { parseArgs } from "node:util";
import { CommerceIngestClient } from "./client.js";
import { CommerceIngestError } from "./errors.js";
import type { Import, ImportKind } from "./types.js";

const USAGE = `Usage: commerce-ingest import --store <id> --kind <orders|customers|checkouts|shipments> <file.ndjson[.gz]>

Imports a shop's history: one record per line, each as that kind's upsert body.
The file is sent as it is read (gzipped on the way, or as is when it is .gz),
then followed until every line is merged.

Exit status: 0 every line imported; 1 some lines refused (or the import stopped
after merging some); 2 bad usage; 3 nothing imported (the key, the store, the
network, the service, a file that cannot be read, or an import that failed).

Options:
  --store <id>        the store's id
  --kind <kind>       what each line holds
  --errors <file>     write every refused line there (NDJSON); the first 10 are printed
  --base-url <url>    the service (default: $COMMERCE_INGEST_BASE_URL or http://127.0.0.1:3000)
  --api-key <key>     the API key (default: $COMMERCE_INGEST_API_KEY)
  -h, --help          this text`;

const KINDS = new Set(["orders", "customers", "checkouts", "shipments"]);
const terminal = process.stderr.isTTY === true;
const number = (value: number) => value.toLocaleString("en-US");
const duration = (seconds: number) => {
  const s = Math.max(0, Math.round(seconds));
  return s >= 3600 ? `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m` : `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
};

/** One line of progress: a bar on a terminal, redrawn in place; elsewhere a line every few seconds. */
function progress(label: string, done: number, total: number, rate: number, unit: string): void {
  const share = total > 0 ? Math.min(1, done / total) : 0;
  const eta = rate > 0 && total > done ? ` ETA ${duration((total - done) / rate)}` : "";
  const text = `${label} ${(share * 100).toFixed(1).padStart(5)}% ${number(done)}/${number(total)} ${unit} ${number(Math.round(rate))} ${unit}/s${eta}`;
  if (terminal) {
    const width = 24;
    const filled = Math.round(share * width);
    process.stderr.write(`\r[${"#".repeat(filled)}${".".repeat(width - filled)}] ${text}\x1b[K`);
  } else {
    process.stderr.write(`${text}\n`);
  }
}

async function isGzipped(file: string): Promise<boolean> {
  const handle = await open(file, "r");
  try {
    const { buffer, bytesRead } = await handle.read(Buffer.alloc(2), 0, 2, 0);
    return bytesRead === 2 && buffer[0] === 0x1f && buffer[1] === 0x8b;
  } finally {
    await handle.close();
  }
}

/** Lines of the file, parsed, for a file sent uncompressed (gzipped on the way by the SDK); `read` counts the file's bytes read. */
async function* records(file: string, read: { bytes: number }): AsyncGenerator<unknown> {
  const { createInterface } = await import("node:readline");
  for await (const line of createInterface({ input: createReadStream(file), crlfDelay: Infinity })) {
    read.bytes += Buffer.byteLength(line) + 1;
    if (!line.trim()) continue;
    try {
      yield JSON.parse(line);
    } catch {
      // Sent as it is: the service lists the line as refused, with its number.
      yield line;
    }
  }
}

async function importFile(args: { store: number; kind: ImportKind; file: string; errors: string | undefined; baseUrl: string | undefined; apiKey: string | undefined }): Promise<number> {
  const client = new CommerceIngestClient({ ...(args.apiKey ? { apiKey: args.apiKey } : {}), ...(args.baseUrl ? { baseUrl: args.baseUrl } : {}), logLevel: "off" });
  const size = statSync(args.file).size;
  const started = Date.now();
  let lastLine = 0;
  const every = (ms: number) => {
    const now = Date.now();
    if (!terminal && now - lastLine < ms) return false;
    lastLine = now;
    return true;
  };
  let handle;
  if (await isGzipped(args.file)) {
    let sent = 0;
    const stream = createReadStream(args.file);
    stream.on("data", (chunk) => {
      sent += chunk.length;
      if (every(5000)) progress("upload", sent, size, sent / ((Date.now() - started) / 1000 || 1), "B");
    });
    handle = await client.imports.create(args.store, { kind: args.kind, file: stream as AsyncIterable<Uint8Array>, gzipped: true });
  } else {
    // The file's bytes read so far (never more than its size): the share of it sent.
    const read = { bytes: 0 };
    handle = await client.imports.create(args.store, {
      kind: args.kind,
      records: records(args.file, read),
      onUpload: () => {
        const bytes = Math.min(read.bytes, size);
        if (every(5000)) progress("upload", bytes, size, bytes / ((Date.now() - started) / 1000 || 1), "B");
      },
    });
  }
  if (terminal) process.stderr.write("\n");
  process.stderr.write(`received ${number(handle.data.lines)} lines in ${duration((Date.now() - started) / 1000)}: import ${handle.id}, ${handle.data.status}\n`);
  const done: Import = await handle.wait({
    intervalMs: 500,
    onProgress: (current) => {
      if (current.status === "queued" || !every(5000)) return;
      progress("import", current.processed, current.lines, current.records_per_second ?? 0, "lines");
    },
  });
  if (terminal) process.stderr.write("\n");
  process.stdout.write(
    `import ${done.id} ${done.status}: ${number(done.lines)} lines, ${number(done.created)} created, ${number(done.updated)} updated, ${number(done.failed)} failed` +
      ` in ${duration((Date.now() - started) / 1000)}${done.records_per_second ? ` (${number(done.records_per_second)} lines/s merging)` : ""}${done.error ? `: ${done.error}` : ""}\n`,
  );
  if (done.failed > 0) {
    const out = args.errors ? createWriteStream(args.errors) : undefined;
    let shown = 0;
    for await (const refused of handle.errors()) {
      out?.write(`${JSON.stringify(refused)}\n`);
      if (shown++ < 10) {
        const fields = (refused.details ?? []).map((detail) => `${detail.path || "(line)"} ${detail.message}`).join("; ");
        process.stderr.write(`  line ${refused.line}${refused.external_id ? ` (${refused.external_id})` : ""}: ${refused.error}${fields ? `: ${fields}` : ""}\n`);
      }
    }
    if (out) await new Promise((resolve) => out.end(resolve));
    if (shown > 10) process.stderr.write(`  … and ${number(shown - 10)} more${args.errors ? ` in ${args.errors}` : " (--errors <file> writes them all)"}\n`);
  }
  if (done.status === "succeeded") return done.failed === 0 ? EXIT.imported : EXIT.someRefused;
  return done.created + done.updated > 0 ? EXIT.someRefused : EXIT.nothingImported;
}

/** The command's exit statuses (see USAGE). */
const EXIT = { imported: 0, someRefused: 1, usage: 2, nothingImported: 3 } as const;

const OPTIONS = {
  store: { type: "string" },
  kind: { type: "string" },
  errors: { type: "string" },
  "base-url": { type: "string" },
  "api-key": { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

async function main(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, allowPositionals: true, options: OPTIONS });
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n\n${USAGE}\n`);
    return EXIT.usage;
  }
  const { values, positionals } = parsed;
  const [command, file, ...extra] = positionals;
  if (values.help || command === undefined) {
    process.stdout.write(`${USAGE}\n`);
    return values.help ? 0 : EXIT.usage;
  }
  const store = Number(values.store);
  const problems = [
    command !== "import" ? `unknown command "${command}"` : undefined,
    !Number.isInteger(store) || store <= 0 ? "--store must be a store id" : undefined,
    !values.kind || !KINDS.has(values.kind) ? "--kind must be orders, customers, checkouts or shipments" : undefined,
    file === undefined ? "name the file to import" : undefined,
    extra.length > 0 ? "import one file at a time" : undefined,
  ].filter(Boolean);
  if (problems.length > 0 || file === undefined) {
    process.stderr.write(`${problems.join("\n")}\n\n${USAGE}\n`);
    return EXIT.usage;
  }
  return importFile({ store, kind: values.kind as ImportKind, file, errors: values.errors, baseUrl: values["base-url"], apiKey: values["api-key"] });
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    if (terminal) process.stderr.write("\n");
    // Nothing was imported: the file, the key, the store, the network or the service refused before.
    process.stderr.write(`${error instanceof CommerceIngestError || error instanceof Error ? error.message : String(error)}\n`);
    process.exit(EXIT.nothingImported);
  },
);
