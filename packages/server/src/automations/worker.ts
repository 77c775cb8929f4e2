import { hostname } from "node:os";
import { webhookMessageSchema } from "@commerce-ingest/shared";
import { inTransaction } from "../db/transaction.js";
import type { Db, JobRow } from "../db/types.js";
import { errorForLog, type Logger } from "../logger.js";
import { formatTimestamp } from "../time.js";
import { decide } from "./flows/index.js";
import { isCustomerErased } from "./flows/flow.repository.js";
import { claimJobs, completeDelivery, finishJob, recordMessage, setMessageStatus } from "./jobs.repository.js";
import type { MessagingProvider, OutboundMessage } from "./providers.js";

export type WorkerOptions = {
  concurrency: number;
  pollIntervalMs: number;
  leaseSeconds: number;
  maxAttempts: number;
  backoffBaseMs: number;
  backoffMaxMs: number;
};

export type Worker = { readonly id: string; stop(): Promise<void>; /** Runs due jobs now rather than at the next poll. */ nudge(): void };

/** Exponential, capped, with jitter so that retries of many jobs spread out. */
export function backoffMs(attempt: number, options: Pick<WorkerOptions, "backoffBaseMs" | "backoffMaxMs">): number {
  const exponential = Math.min(options.backoffMaxMs, options.backoffBaseMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(exponential / 2 + Math.random() * (exponential / 2));
}

function describe(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.slice(0, 1000);
}

/**
 * Another worker took the job over (this one's lease ran out): whatever this
 * worker did in the job's transaction is rolled back, and the job is left to it.
 */
class LeaseLost extends Error {
  constructor() {
    super("another worker holds the job");
  }
}

const LEFT_TO_OTHER = "automation left to the worker that took it over";

/** Runs one claimed job to an outcome; never throws. */
export async function runJob(
  deps: { db: Db; logger: Logger; provider: MessagingProvider; workerId: string },
  options: WorkerOptions,
  job: JobRow,
): Promise<void> {
  const { db, logger, provider, workerId } = deps;
  const log = logger.child({ jobId: job.id, flow: job.flow, attempt: job.attempts });
  try {
    if (job.attempts > options.maxAttempts) {
      // Only a job whose workers kept dying gets here: each death spent an attempt.
      const error = job.last_error ?? "the worker running it stopped too many times";
      if (!(await finishJob(db, job, workerId, { status: "failed", error }))) throw new LeaseLost();
      await setMessageStatus(db, job.id, "failed");
      log.error("automation failed");
      return;
    }
    const outcome = await inTransaction(db, async (trx) => {
      const decision = await decide(trx, job);
      if (!decision.send) {
        if (!(await finishJob(trx, job, workerId, { status: "cancelled", error: decision.reason }))) throw new LeaseLost();
        return { kind: "nothing" as const, reason: decision.reason };
      }
      const { recipient } = decision;
      const message = await recordMessage(
        trx,
        {
          store_id: job.store_id,
          job_id: job.id,
          flow: job.flow,
          customer_id: recipient.id,
          contact_id: recipient.contact_id,
          to_phone: recipient.phone,
          content: decision.content,
          provider: provider.name,
        },
        provider.external ? "pending" : "sent",
      );
      // Checked against the published webhook type: a flow whose content drifted fails here, loudly, not at the receiver.
      const outbound: OutboundMessage = webhookMessageSchema.parse({
        id: message.id,
        store_id: message.store_id,
        flow: message.flow,
        to: message.to_phone,
        content: message.content,
        created_at: formatTimestamp(message.created_at),
      });
      if (provider.external) return { kind: "deliver" as const, outbound, customerId: message.customer_id, alreadySent: message.status === "sent" };
      // Local delivery: the message and the job's end commit together, exactly once.
      if (!(await finishJob(trx, job, workerId, { status: "succeeded" }))) throw new LeaseLost();
      await provider.deliver(outbound);
      return { kind: "done" as const, messageId: message.id };
    });
    if (outcome.kind === "nothing") {
      log.info({ reason: outcome.reason }, "automation had nothing to send");
      return;
    }
    if (outcome.kind === "deliver") {
      // The message is recorded (with its stable id) before it leaves: a retry resends the same one.
      if (!outcome.alreadySent) {
        if (await isCustomerErased(db, outcome.customerId)) {
          if (!(await finishJob(db, job, workerId, { status: "cancelled", error: "the customer was erased" }))) throw new LeaseLost();
          await setMessageStatus(db, job.id, "failed");
          log.info("automation had nothing to send: the customer was erased");
          return;
        }
        await provider.deliver(outcome.outbound);
      }
      // A worker that took the job over delivers the same message again (same id): receivers drop the repeat.
      if (!(await completeDelivery(db, job, workerId))) throw new LeaseLost();
      log.info({ messageId: outcome.outbound.id }, "automation succeeded");
      return;
    }
    log.info({ messageId: outcome.messageId }, "automation succeeded");
  } catch (error) {
    if (error instanceof LeaseLost) {
      log.warn(LEFT_TO_OTHER);
      return;
    }
    const reason = describe(error);
    try {
      if (job.attempts >= options.maxAttempts) {
        if (!(await finishJob(db, job, workerId, { status: "failed", error: reason }))) return log.warn(LEFT_TO_OTHER);
        await setMessageStatus(db, job.id, "failed");
        log.error({ err: errorForLog(error) }, "automation failed");
      } else {
        const retryInMs = backoffMs(job.attempts, options);
        if (!(await finishJob(db, job, workerId, { status: "pending", error: reason, retryInMs }))) return log.warn(LEFT_TO_OTHER);
        log.warn({ err: errorForLog(error), retryInMs }, "automation will be retried");
      }
    } catch (bookkeeping) {
      // The lease runs out and another worker takes the job again: nothing is lost.
      log.error({ err: errorForLog(bookkeeping) }, "could not record the automation's outcome");
    }
  }
}

/**
 * Runs due jobs until stopped, `concurrency` at a time: each job that ends
 * frees its slot for the next due job at once, so one slow delivery never holds
 * the others back. Any number of workers, in any number of processes, can share
 * one PostgreSQL: claiming skips locked rows, and a job whose worker died is
 * taken again once its lease runs out.
 */
export function startWorker(deps: { db: Db; logger: Logger; provider: MessagingProvider }, options: WorkerOptions): Worker {
  const id = `${hostname()}:${process.pid}:${Math.random().toString(36).slice(2, 8)}`;
  const logger = deps.logger.child({ worker: id });
  const runDeps = { ...deps, logger, workerId: id };
  const inFlight = new Set<Promise<void>>();
  let running = true;
  let claiming = false;
  /** Set when a slot freed up or a nudge came while a claim was under way: claim again right after. */
  let again = false;

  /** Fills every free slot with a due job; one claim at a time, so slots are never over-filled. */
  async function fill(): Promise<void> {
    if (claiming) {
      again = true;
      return;
    }
    claiming = true;
    try {
      do {
        again = false;
        const free = options.concurrency - inFlight.size;
        if (!running || free <= 0) break;
        let jobs: JobRow[] = [];
        try {
          jobs = await claimJobs(deps.db, id, options.leaseSeconds, free);
        } catch (error) {
          logger.warn({ err: errorForLog(error) }, "could not claim jobs");
          break;
        }
        for (const job of jobs) start(job);
        // A full batch means more may be due right now.
        if (jobs.length === free) again = true;
      } while (again && running);
    } finally {
      claiming = false;
    }
  }

  function start(job: JobRow): void {
    const run: Promise<void> = runJob(runDeps, options, job)
      // runJob settles every job itself; a rejection here would be a bug, and must not stop the worker.
      .catch((error: unknown) => logger.error({ err: errorForLog(error) }, "job runner failed"))
      .finally(() => {
        inFlight.delete(run);
        void fill();
      });
    inFlight.add(run);
  }

  logger.info({ concurrency: options.concurrency }, "worker started");
  const poll = setInterval(() => void fill(), options.pollIntervalMs);
  void fill();

  return {
    id,
    nudge: () => void fill(),
    async stop() {
      running = false;
      clearInterval(poll);
      while (inFlight.size > 0 || claiming) await Promise.race([...inFlight, new Promise((resolve) => setTimeout(resolve, 10))]);
      logger.info("worker stopped");
    },
  };
}
