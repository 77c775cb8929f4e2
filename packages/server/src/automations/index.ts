import type { Env } from "../env.js";
import { recordingProvider, webhookProvider, type MessagingProvider } from "./providers.js";

export { startWorker, type Worker, type WorkerOptions } from "./worker.js";

/** The webhook provider when a URL is configured, else the recording one. */
export function providerFromEnv(env: Env): MessagingProvider {
  return env.webhook ? webhookProvider(env.webhook) : recordingProvider();
}
