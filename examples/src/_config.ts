import fs from "node:fs";
import path from "node:path";
import { APIError, CommerceIngestClient, ConnectionError } from "@commerce-ingest/sdk";

const dataDir = () => process.env.DATA_DIR || ".data";

/**
 * Where the examples find the service: BASE_URL, STORE_ID and API_KEY from the
 * environment, else from DATA_DIR/demo.env, which the service writes on its
 * first start.
 */
export function loadConfig(): { baseUrl: string; storeId: number; apiKey: string } {
  const file = path.resolve(dataDir(), "demo.env");
  const fromFile: Record<string, string> = {};
  if (fs.existsSync(file)) {
    for (const line of fs.readFileSync(file, "utf8").split("\n")) {
      const match = /^([A-Z_]+)=(.*)$/.exec(line.trim());
      if (match?.[1]) fromFile[match[1]] = match[2] ?? "";
    }
  }
  const value = (name: string) => process.env[name] || fromFile[name];
  const baseUrl = value("BASE_URL");
  const storeId = Number(value("STORE_ID"));
  const apiKey = value("API_KEY");
  if (!baseUrl || !apiKey || !Number.isInteger(storeId)) {
    console.error(`Set BASE_URL, STORE_ID and API_KEY, or start the service once (pnpm start) so that ${file} exists.`);
    process.exit(1);
  }
  return { baseUrl, storeId, apiKey };
}

export function connect() {
  const config = loadConfig();
  const client = new CommerceIngestClient({ apiKey: config.apiKey, baseUrl: config.baseUrl });
  return { client, store: client.store(config.storeId), storeId: config.storeId, baseUrl: config.baseUrl };
}

/** A unique suffix, so that running an example twice shows creation both times. */
export const runId = () => Date.now().toString(36);

export const say = (text: string) => console.log(text);

/** Runs an example, explaining the failure a newcomer is most likely to meet. */
export async function main(example: () => Promise<void>): Promise<void> {
  try {
    await example();
  } catch (error) {
    if (error instanceof ConnectionError) {
      console.error(`Cannot reach the service (${error.message}). Is it running? Start it with: pnpm start`);
    } else if (error instanceof APIError) {
      console.error(`The API answered ${error.status} ${error.message} (request id ${error.requestId})`);
      if (error.details.length > 0) console.error(JSON.stringify(error.body, null, 2));
    } else {
      console.error(error);
    }
    process.exitCode = 1;
  }
}

type Run = { id: number; flow: string; record_type: string; record_external_id: string; status: string; error: string | null; run_at: string };
type Message = { run_id: number; to_phone: string | null; status: string };

/** The operator token the service keeps next to its data, when this machine runs it. */
function operatorToken(): string | undefined {
  if (process.env.ADMIN_TOKEN) return process.env.ADMIN_TOKEN;
  try {
    return fs.readFileSync(path.resolve(dataDir(), "admin-token"), "utf8").trim();
  } catch {
    return undefined;
  }
}

const minutesFromNow = (iso: string) => Math.round((Date.parse(iso) - Date.now()) / 60_000);

type RecordRef = [type: "order" | "customer" | "checkout" | "shipment", externalId: string];

/**
 * Waits until the worker has run what is due for these records (a few seconds
 * at most), and answers their runs, oldest first, with the store's messages.
 * Reads the store's activity from the operator API, which a service started on
 * this machine allows; elsewhere answers undefined.
 */
async function settledActivity(records: RecordRef[]): Promise<{ runs: Run[]; messages: Message[] } | undefined> {
  const { baseUrl, storeId } = loadConfig();
  const token = operatorToken();
  if (!token) return undefined;
  const wanted = new Set(records.map(([type, id]) => `${type} ${id}`));
  let runs: Run[] = [];
  let messages: Message[] = [];
  for (let poll = 0; poll < 25; poll++) {
    const response = await fetch(`${baseUrl}/admin/v1/stores/${storeId}/activity?limit=200`, { headers: { Authorization: `Bearer ${token}` } }).catch(() => undefined);
    if (!response?.ok) return undefined;
    const activity = (await response.json()) as { runs: Run[]; messages: Message[] };
    runs = activity.runs.filter((run) => wanted.has(`${run.record_type} ${run.record_external_id}`)).reverse();
    messages = activity.messages;
    const due = (run: Run) => run.status === "running" || (run.status === "pending" && Date.parse(run.run_at) <= Date.now());
    if (!runs.some(due)) break;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return { runs, messages };
}

/** Waits until the worker has run what these records triggered, as time passing between a shop's events would allow. */
export async function waitForAutomations(records: RecordRef[]): Promise<void> {
  if (!(await settledActivity(records))) await new Promise((resolve) => setTimeout(resolve, 1000));
}

/**
 * Ends an example by showing what its pushes triggered: each automation run for
 * the records named, once the worker has had its turn (a few seconds at most),
 * with its message; elsewhere than on the service's machine, says how to look.
 */
export async function showTriggered(records: RecordRef[]): Promise<void> {
  const { storeId } = loadConfig();
  const command = `pnpm admin activity --store ${storeId}`;
  const activity = await settledActivity(records);
  if (!activity) return say(`\nSee what this triggered: ${command}`);
  const { runs, messages } = activity;
  say("\nWhat this triggered:");
  if (runs.length === 0) say("  nothing");
  for (const run of runs) {
    const message = messages.find((m) => m.run_id === run.id);
    const outcome =
      run.status === "pending"
        ? `scheduled in ${minutesFromNow(run.run_at)} min`
        : run.status === "succeeded" && message
          ? `message to ${message.to_phone ?? "(erased)"}: ${message.status}`
          : `${run.status}${run.error ? ` (${run.error})` : ""}`;
    say(`  ${run.flow.padEnd(22)} ${`${run.record_type} ${run.record_external_id}`.padEnd(40)} ${outcome}`);
  }
  say(`(all of the store's activity: ${command})`);
}
