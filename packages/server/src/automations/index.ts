import { recordingProvider, webhookProvider, type MessagingProvider } from "./providers.js";

export { startWorker, type Worker, type WorkerOptions } from "./worker.js";

/** The webhook provider when a URL is configured, else the recording one. */
export function providerFromEnv(env: { webhook: Parameters<typeof webhookProvider>[0] | undefined }): MessagingProvider {
  return env.webhook ? webhookProvider(env.webhook) : recordingProvider();
}
