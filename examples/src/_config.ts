import fs from "node:fs";
import path from "node:path";
import { APIError, CommerceIngestClient, ConnectionError } from "@commerce-ingest/sdk";

/**
 * Where the examples find the service: BASE_URL, STORE_ID and API_KEY from the
 * environment, else from DATA_DIR/demo.env, which the service writes on its
 * first start.
 */
export function loadConfig(): { baseUrl: string; storeId: number; apiKey: string } {
  const file = path.resolve(process.env.DATA_DIR || ".data", "demo.env");
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
      if (error.body && typeof error.body === "object" && "details" in error.body) console.error(JSON.stringify(error.body, null, 2));
    } else {
      console.error(error);
    }
    process.exitCode = 1;
  }
}
