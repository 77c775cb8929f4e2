import { parseArgs } from "node:util";
import { startLocalIngest } from "./index.js";

const USAGE = `Usage: commerce-ingest-local [--port <n>] [--data-dir <dir>] [--country <CC>]

Runs the Commerce Data Ingestion service on this machine, on an embedded
database, and prints its address, a store and a key. Messages the
automations send are recorded, never sent out. Ctrl-C stops it.

Options:
  --port <n>        where it listens (default: a free port)
  --data-dir <dir>  keep its data there (default: a temporary folder, removed at exit)
  --country <CC>    the store's country for phones without + (default: US)
  -h, --help        this text`;

function usage(message: string): never {
  process.stderr.write(`${message}\n\n${USAGE}\n`);
  process.exit(2);
}

let values: { port?: string | undefined; "data-dir"?: string | undefined; country?: string | undefined; help?: boolean | undefined };
try {
  ({ values } = parseArgs({
    options: { port: { type: "string" }, "data-dir": { type: "string" }, country: { type: "string" }, help: { type: "boolean", short: "h" } },
    strict: true,
  }));
} catch (error) {
  usage(error instanceof Error ? error.message : String(error));
}
if (values.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}
const port = values.port === undefined ? 0 : Number(values.port);
if (!Number.isInteger(port) || port < 0 || port > 65535) usage("--port must be a whole number from 0 to 65535");
if (values.country !== undefined && !/^[A-Za-z]{2}$/.test(values.country)) usage("--country must be two letters (ISO 3166), for example US");

const ingest = await startLocalIngest({ port, dataDir: values["data-dir"], country: values.country?.toUpperCase(), logLevel: "warn" });
process.stdout.write(
  [
    `Commerce Data Ingestion, local, at ${ingest.url}`,
    `  COMMERCE_INGEST_BASE_URL=${ingest.url}`,
    `  COMMERCE_INGEST_API_KEY=${ingest.apiKey}`,
    `  STORE_ID=${ingest.storeId}`,
    `API reference: ${ingest.url}/docs`,
    "",
  ].join("\n"),
);
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    ingest.stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
}
