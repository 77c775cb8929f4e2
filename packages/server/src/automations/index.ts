import { operatorWebhook, recordingProvider, type MessagingProvider } from "./providers.js";

export { startWorker, type Worker, type WorkerOptions } from "./worker.js";

/** The webhook provider when a URL is configured, else the recording one: the default of stores with no endpoint of their own. */
export function providerFromEnv(env: { webhook: Parameters<typeof operatorWebhook>[0] | undefined }): MessagingProvider {
  return env.webhook ? operatorWebhook(env.webhook) : recordingProvider();
}
