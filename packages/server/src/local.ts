import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Flow } from "@commerce-ingest/shared";
import { listMessages } from "./automations/jobs.repository.js";
import { inTransaction } from "./db/sql.js";
import { parseEnv } from "./env.js";
import { createLogger } from "./logger.js";
import { startServer } from "./server.js";
import * as tenants from "./tenancy/tenant.service.js";

/**
 * The real service, in this process, on the embedded database, for an
 * integrator's own tests (`@commerce-ingest/local`): every endpoint, rule and
 * automation as deployed, with a store and a key made for the run.
 */
export type LocalOptions = {
  /** 0 (the default): a free port. */
  port?: number | undefined;
  /** Unset: a new temporary folder, removed by `stop()`. A folder given is kept, and a later run on it finds its data. */
  dataDir?: string | undefined;
  /** The store's country, for phones written without `+` (ISO 3166 alpha-2). Default `US`. */
  country?: string | undefined;
  /** The store's checkout-recovery delay. Default 0: a recovery is sent as soon as the worker sees the checkout. */
  recoveryDelaySeconds?: number | undefined;
  /** Requests per key per window, as deployed by default (1,000 per 10 s); 0 turns the limit off. */
  rateLimitRequests?: number | undefined;
  /** What the service logs to standard output. Default `error`. */
  logLevel?: "fatal" | "error" | "warn" | "info" | "debug" | "trace" | "silent" | undefined;
};

export type LocalMessage = {
  id: string;
  flow: Flow;
  status: string;
  to_phone: string | null;
  content: unknown;
  created_at: string;
};

export type LocalService = {
  url: string;
  storeId: number;
  apiKey: string;
  /** The operator token of this instance (its admin API). */
  adminToken: string;
  dataDir: string;
  /** The messages the automations sent, oldest first (the instance records them; it sends nothing out). */
  messages(filter?: { flow?: Flow | undefined }): Promise<LocalMessage[]>;
  stop(): Promise<void>;
};

export async function startLocal(options: LocalOptions = {}): Promise<LocalService> {
  const temporary = options.dataDir === undefined;
  const dataDir = path.resolve(options.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), "commerce-ingest-")));
  const adminToken = randomBytes(24).toString("hex");
  const env = parseEnv({
    PORT: String(options.port ?? 0),
    HOST: "127.0.0.1",
    DATA_DIR: dataDir,
    ADMIN_TOKEN: adminToken,
    SEED_DEMO: "false",
    LOG_LEVEL: options.logLevel ?? "error",
    LOG_FORMAT: "json",
    // A test run's service answers at once when stopped: nothing of its own is worth waiting for.
    SHUTDOWN_TIMEOUT_MS: "2000",
    // An instance for tests serves the API, not the console's pages.
    CONSOLE_DIR: path.join(dataDir, "console"),
    ...(options.rateLimitRequests === undefined ? {} : { RATE_LIMIT_REQUESTS: String(options.rateLimitRequests) }),
  });
  const server = await startServer(env, createLogger(env.logLevel, "json"), () => undefined);
  try {
    const db = server.database.db;
    const { storeId, apiKey } = await inTransaction(db, async (trx) => {
      const [existing] = await tenants.listStores(trx, undefined);
      const store =
        existing ??
        (await tenants.createStore(trx, {
          team_id: (await tenants.createTeam(trx, "Local team")).id,
          name: "Local store",
          country: options.country ?? "US",
          recovery_delay_seconds: options.recoveryDelaySeconds ?? 0,
        }));
      const key = await tenants.createApiKey(trx, { team_id: store.team_id, name: `Local key ${new Date().toISOString()}` });
      return { storeId: store.id, apiKey: key.key };
    });
    let stopping: Promise<void> | undefined;
    return {
      url: server.url,
      storeId,
      apiKey,
      adminToken,
      dataDir,
      async messages(filter = {}) {
        const rows = await listMessages(db, storeId, 10_000, filter);
        return rows.reverse().map((row) => ({
          id: String(row.id),
          flow: row.flow,
          status: row.status,
          to_phone: row.to_phone,
          content: row.content,
          created_at: new Date(row.created_at).toISOString(),
        }));
      },
      stop() {
        stopping ??= server.close().finally(() => {
          if (temporary) fs.rmSync(dataDir, { recursive: true, force: true });
        });
        return stopping;
      },
    };
  } catch (error) {
    await server.close();
    if (temporary) fs.rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }
}
