import { startLocal } from "../../server/src/local.js";

/** The automations' names, as the messages carry them. */
export type Flow = "post_purchase" | "checkout_recovery" | "contact_sync" | "shipping_notification";

export type LocalIngestOptions = {
  /** 0 (the default): a free port. */
  port?: number | undefined;
  /** Unset: a new temporary folder, removed by `stop()`. A folder given is kept, and a later start on it finds its data. */
  dataDir?: string | undefined;
  /** The store's country, for phones written without `+` (ISO 3166 alpha-2). Default `US`. */
  country?: string | undefined;
  /** The store's checkout-recovery delay. Default 0: a recovery is sent as soon as the worker sees the checkout. */
  recoveryDelaySeconds?: number | undefined;
  /** Requests per key per 10 s, as deployed by default (1,000); 0 turns the limit off. */
  rateLimitRequests?: number | undefined;
  /** What the service logs to standard output. Default `error`. */
  logLevel?: "fatal" | "error" | "warn" | "info" | "debug" | "trace" | "silent" | undefined;
};

/** A message an automation sent: the instance records it, and sends nothing out. */
export type LocalMessage = {
  id: string;
  flow: Flow;
  status: string;
  /** The contact's phone in E.164. */
  to_phone: string | null;
  /** What the messaging provider would receive (the flow's template and its fields). */
  content: unknown;
  created_at: string;
};

export type LocalIngest = {
  /** Where the API answers, for example `http://127.0.0.1:41235` (the SDK's `baseUrl`). */
  url: string;
  storeId: number;
  /** A key of the store's team, made for this start. */
  apiKey: string;
  /** The instance's operator token (its admin API). */
  adminToken: string;
  /** Where its database lives. */
  dataDir: string;
  /** The messages the automations sent, oldest first, of one flow if asked. */
  messages(filter?: { flow?: Flow | undefined }): Promise<LocalMessage[]>;
  /**
   * Waits until at least `count` messages (of the flow, if given) were sent, and returns them all;
   * rejects after `timeoutMs` (default 10,000) with what had arrived.
   */
  waitForMessages(count: number, options?: { flow?: Flow | undefined; timeoutMs?: number | undefined }): Promise<LocalMessage[]>;
  /** Stops the service and, unless `dataDir` was given, removes its data. */
  stop(): Promise<void>;
};

/**
 * Starts the real service in this process, on an embedded PostgreSQL, on a free port,
 * with a team, a store and a key: every endpoint, check and automation as deployed.
 *
 * ```ts
 * const ingest = await startLocalIngest();
 * const client = new CommerceIngestClient({ apiKey: ingest.apiKey, baseUrl: ingest.url });
 * // ...
 * await ingest.stop();
 * ```
 */
export async function startLocalIngest(options: LocalIngestOptions = {}): Promise<LocalIngest> {
  const service = await startLocal(options);
  return {
    url: service.url,
    storeId: service.storeId,
    apiKey: service.apiKey,
    adminToken: service.adminToken,
    dataDir: service.dataDir,
    messages: (filter) => service.messages(filter),
    async waitForMessages(count, { flow, timeoutMs = 10_000 } = {}) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const messages = await service.messages({ flow });
        if (messages.length >= count) return messages;
        if (Date.now() >= deadline) {
          throw Object.assign(new Error(`${messages.length} of ${count} ${flow ?? ""} messages after ${timeoutMs} ms`.replace("  ", " ")), { messages });
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    stop: () => service.stop(),
  };
}
