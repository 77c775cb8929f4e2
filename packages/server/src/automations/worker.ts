import { hostname } from "node:os";
import { webhookMessageSchema } from "@commerce-ingest/shared";
import { inTransaction, inSavepoint, formatTimestamp } from "../db/sql.js";
import type { Db, JobRow, Trx } from "../db/types.js";
import { errorForLog, type Logger } from "../logger.js";
import { decide, decideMany } from "./flows/index.js";
import { ERASED } from "./flows/flow.js";
import { isCustomerErased } from "./flows/flow.repository.js";
import { claimHeldJobs, claimJobs, completeDelivery, endHeldJobs, finishJob, lockDueJobs, recordMessage, recordMessages, redactJobsOfErased, setMessageStatus, type DueJob, type NewMessage } from "./jobs.repository.js";
import { DEFAULT_ENDPOINT_SETTINGS, type EndpointSettings } from "./delivery.service.js";
import { endpointForDelivery, recordAttempt, storesWithEndpoints } from "./endpoints.repository.js";
import { DeliveryFailed, webhookProvider, type MessagingProvider, type OutboundMessage } from "./providers.js";

type WorkerDeps = { db: Db; logger: Logger; provider: MessagingProvider; workerId: string; endpoints?: EndpointSettings | undefined };

/** The provider a store's messages go through: its own endpoint when it has one, else the service's default. */
async function providerFor(deps: WorkerDeps, storeId: number): Promise<MessagingProvider> {
  const endpoint = await endpointForDelivery(deps.db, storeId);
  if (!endpoint) return deps.provider;
  const settings = deps.endpoints ?? DEFAULT_ENDPOINT_SETTINGS;
  return webhookProvider({ url: endpoint.url, secrets: () => endpoint.secrets, timeoutMs: settings.timeoutMs, allowPrivate: settings.allowPrivate });
}

/** Hands a message over and keeps what the endpoint answered, whether it took the message or not. */
async function deliverAndRecord(db: Db, logger: Logger, provider: MessagingProvider, storeId: number, outbound: OutboundMessage): Promise<void> {
  const keep = (answer: Parameters<typeof recordAttempt>[3]) =>
    recordAttempt(db, storeId, outbound.id, answer).catch((error: unknown) => logger.warn({ err: errorForLog(error) }, "could not record a delivery attempt"));
  try {
    const answer = await provider.deliver(outbound);
    if (answer) await keep(answer);
  } catch (error) {
    if (error instanceof DeliveryFailed) await keep(error.answer);
    throw error;
  }
}

export type WorkerOptions = {
  concurrency: number;
  /**
   * Jobs run together in one transaction when delivery is local: one claim,
   * one commit, one insert of their messages and one update ending them.
   */
  batchSize: number;
  pollIntervalMs: number;
  leaseSeconds: number;
  maxAttempts: number;
  backoffBaseMs: number;
  backoffMaxMs: number;
};

export type Worker = {
  readonly id: string;
  stop(): Promise<void>;
  /** Runs due jobs soon (within `NUDGE_GATHER_MS`) rather than at the next poll. */
  nudge: () => void;
};

/**
 * How long a nudge waits for more: the jobs of a burst of pushes are claimed
 * and run together, not one claim and one transaction per push. Each group
 * costs its claim, its reads, its writes and its commit whatever its size, so
 * under a steady stream of pushes a longer wait makes fewer, larger groups:
 * 100 ms rather than 20 saved about a fifth of the database's CPU per order
 * push and a seventh of the service's (see docs/performance.md), for messages
 * sent at most 80 ms later.
 */
export const NUDGE_GATHER_MS = 100;

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
export async function runJob(deps: WorkerDeps, options: WorkerOptions, job: JobRow): Promise<void> {
  const { db, logger, workerId } = deps;
  const log = logger.child({ jobId: job.id, storeId: job.store_id, flow: job.flow, attempt: job.attempts });
  try {
    const provider = await providerFor(deps, job.store_id);
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
        if (decision.reason === ERASED) await redactJobsOfErased(trx, [job.id]);
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
      const outbound = outboundOf(message);
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
        await deliverAndRecord(db, log, provider, job.store_id, outcome.outbound);
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
 * Runs due jobs when delivery is local (the database row is the message): one
 * transaction takes up to `limit` of them (`lockDueJobs`) and runs them
 * together, set-based: it reads each flow's records in one
 * statement (and makes its writes in another), records every message in one
 * insert, ends every job in one update and commits once. Each job comes to
 * exactly what it would alone, and is written once, from due to its end: the
 * transaction's locks, not a lease, keep other workers off it, and a worker
 * that dies mid-way leaves it due as it was. Should anything of the group fail
 * (a flow's error, a deadlock with a request), nothing of it stays, and each
 * job runs on its own, which also tells which one failed and retries it alone;
 * so do jobs out of attempts, and jobs whose record a push held (a flow that
 * must wait for it: see `loadWaiting`), claimed in the same transaction.
 * `taken` learns how many were due as soon as they are held.
 * Returns how many were due.
 */
export async function runDueJobs(
  deps: WorkerDeps,
  options: WorkerOptions,
  limit: number,
  taken: (count: number) => void = () => {},
): Promise<number> {
  const { db, logger, provider, workerId } = deps;
  const ran = await inTransaction(db, async (trx) => {
    const due = await lockDueJobs(trx, limit);
    taken(due.length);
    // A claim would make this attempt `attempts + 1`: jobs out of attempts, and every job of a delivery that leaves
    // the process (it must not happen inside the transaction: the service's provider, or a store's own endpoint)
    // go one by one.
    const ownEndpoints = provider.external ? new Set<number>() : await storesWithEndpoints(trx, due.map((job) => job.store_id));
    const grouped = (job: DueJob) => !provider.external && !ownEndpoints.has(job.store_id) && job.attempts < options.maxAttempts;
    const together = due.filter(grouped);
    const outcomes =
      together.length === 0
        ? []
        : await inSavepoint(
            trx,
            "jobs_together",
            () => runTogether(trx, provider, workerId, together),
            (error) => {
              logger.warn({ err: errorForLog(error), jobs: together.length }, "automations run one by one");
              return true;
            },
          );
    // What the group did not end (all of it, should the group have failed; a job whose record a push held) is
    // claimed and run one by one.
    const ended = new Set((outcomes ?? []).map(({ job }) => job));
    const rest = due.filter((job) => !ended.has(job));
    const claimed = new Map((await claimHeldJobs(trx, rest.map((job) => job.id), workerId, options.leaseSeconds)).map((job) => [job.id, job]));
    return { count: due.length, outcomes: outcomes ?? [], alone: rest.flatMap((job) => claimed.get(job.id) ?? []) };
  });
  for (const { job, reason, outbound } of ran.outcomes) {
    const fields = { jobId: job.id, storeId: job.store_id, flow: job.flow, attempt: job.attempts + 1 };
    if (outbound) logger.info({ ...fields, messageId: outbound.id }, "automation succeeded");
    else logger.info({ ...fields, reason }, "automation had nothing to send");
  }
  // Side by side: each was claimed with its own lease, and one slow endpoint must not hold the others past theirs.
  await Promise.all(ran.alone.map((job) => runJob(deps, options, job)));
  return ran.count;
}

/** The set-based run of `runDueJobs`, inside its transaction: each job's decision, its message, its end. */
async function runTogether(trx: Trx, provider: MessagingProvider, workerId: string, jobs: readonly DueJob[]) {
  const decided = await decideMany(trx, jobs);
  const messages: NewMessage[] = decided.flatMap(({ job, decision }) =>
    decision.send
      ? [{ store_id: job.store_id, job_id: job.id, flow: job.flow, customer_id: decision.recipient.id, contact_id: decision.recipient.contact_id, to_phone: decision.recipient.phone, content: decision.content, provider: provider.name }]
      : [],
  );
  const recorded = await recordMessages(trx, messages, "sent");
  await redactJobsOfErased(trx, decided.flatMap(({ job, decision }) => (!decision.send && decision.reason === ERASED ? [job.id] : [])));
  await endHeldJobs(trx, decided.map(({ job, decision }) => ({ job, status: decision.send ? "succeeded" : "cancelled", error: decision.send ? null : decision.reason })), workerId);
  const outcomes = decided.map(({ job, decision }) => {
    const message = decision.send ? recorded.get(Number(job.id)) : undefined;
    if (decision.send && !message) throw new Error("a message was not recorded");
    return { job, reason: decision.send ? undefined : decision.reason, outbound: message && outboundOf(message) };
  });
  // Local delivery: the messages and the jobs' ends commit together, exactly once.
  for (const { outbound } of outcomes) if (outbound) await provider.deliver(outbound);
  return outcomes;
}

/** A recorded message as it leaves the service, checked against the published webhook type. */
function outboundOf(message: { id: string; store_id: number; flow: string; to_phone: string | null; content: unknown; created_at: Date }): OutboundMessage {
  // A flow whose content drifted fails here, loudly, not at the receiver.
  return webhookMessageSchema.parse({
    id: message.id,
    store_id: message.store_id,
    flow: message.flow,
    to: message.to_phone,
    content: message.content,
    created_at: formatTimestamp(message.created_at),
  });
}

/**
 * Runs due jobs until stopped, `concurrency` groups at a time (of up to
 * `batchSize` jobs when delivery is local, one job otherwise): each group that
 * ends frees its slot for the next due jobs at once, so one slow delivery never
 * holds the others back. Any number of workers, in any number of processes, can
 * share one PostgreSQL: taking jobs skips locked rows; a job whose worker died
 * is due again at once when it was held by the worker's transaction (local
 * delivery), or once its lease runs out when it was claimed.
 */
export function startWorker(deps: Omit<WorkerDeps, "workerId">, options: WorkerOptions): Worker {
  const id = `${hostname()}:${process.pid}:${Math.random().toString(36).slice(2, 8)}`;
  const logger = deps.logger.child({ worker: id });
  const runDeps = { ...deps, logger, workerId: id };
  const groupSize = deps.provider.external ? 1 : Math.max(1, options.batchSize);
  const inFlight = new Set<Promise<void>>();
  let running = true;
  let claiming = false;
  /** Set when a slot freed up or a nudge came while a claim was under way: claim again right after. */
  let again = false;
  let nudged: NodeJS.Timeout | undefined;
  /** The last claim took all it could: more jobs were probably due. */
  let backlog = false;
  /** A nudge or poll found every slot busy: claim as soon as one frees up. */
  let wanted = false;

  /** Fills every free slot with due jobs; one claim at a time, so slots are never over-filled. */
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
        if (!running) break;
        if (free <= 0) {
          wanted = true;
          break;
        }
        wanted = false;
        if (deps.provider.external) {
          let jobs: JobRow[] = [];
          try {
            jobs = await claimJobs(deps.db, id, options.leaseSeconds, free);
          } catch (error) {
            logger.warn({ err: errorForLog(error) }, "could not claim jobs");
            break;
          }
          for (const job of jobs) start(() => runJob(runDeps, options, job));
          // A full claim means more may be due right now: claim again, now and as slots free up.
          backlog = jobs.length === free;
        } else {
          // One group at a time: how many were due is known once its transaction holds them.
          const due = await new Promise<number>((taken) =>
            start(async () => {
              try {
                await runDueJobs(runDeps, options, groupSize, taken);
              } catch (error) {
                // Nothing of the group stays: its jobs are due again as they were.
                logger.warn({ err: errorForLog(error) }, "could not claim jobs");
              } finally {
                taken(0);
              }
            }),
          );
          backlog = due === groupSize;
        }
        if (backlog) again = true;
      } while (again && running);
    } finally {
      claiming = false;
    }
  }

  function start(work: () => Promise<void>): void {
    const run: Promise<void> = work()
      // Every job settles itself; a rejection here would be a bug, and must not stop the worker.
      .catch((error: unknown) => logger.error({ err: errorForLog(error) }, "job runner failed"))
      .finally(() => {
        inFlight.delete(run);
        // Jobs left behind, or a nudge that found the slots busy: claim now. Otherwise the next nudge
        // or poll claims: no claim that finds nothing after each group.
        if (backlog || wanted) void fill();
      });
    inFlight.add(run);
  }

  logger.info({ concurrency: options.concurrency, batchSize: groupSize }, "worker started");
  const poll = setInterval(() => void fill(), options.pollIntervalMs);
  void fill();

  return {
    id,
    nudge: () => {
      if (nudged || !running) return;
      nudged = setTimeout(() => {
        nudged = undefined;
        void fill();
      }, NUDGE_GATHER_MS);
    },
    async stop() {
      running = false;
      clearInterval(poll);
      clearTimeout(nudged);
      while (inFlight.size > 0 || claiming) await Promise.race([...inFlight, new Promise((resolve) => setTimeout(resolve, 10))]);
      logger.info("worker stopped");
    },
  };
}
