import type { Flow } from "@commerce-ingest/shared";
import type { JobRow, Trx } from "../../db/types.js";
import type { DueJob } from "../jobs.repository.js";
import { checkoutRecovery } from "./checkout-recovery.js";
import { contactSync } from "./contact-sync.js";
import type { FlowDecision, FlowDefinition } from "./flow.js";
import { lockRecipientContacts } from "./flow.repository.js";
import { postPurchase } from "./post-purchase.js";
import { shippingNotification } from "./shipping-notification.js";

export * from "./checkout-recovery.js";
export * from "./contact-sync.js";
export * from "./post-purchase.js";
export * from "./shipping-notification.js";
export type { FlowDecision, Recipient, TriggerOptions, TriggerStore } from "./flow.js";

/** Every flow, by name: shared's flow list names exactly these (a missing or extra one fails to compile). */
export const FLOW_DEFINITIONS: { [F in Flow]: FlowDefinition<F> } = {
  post_purchase: postPurchase,
  checkout_recovery: checkoutRecovery,
  contact_sync: contactSync,
  shipping_notification: shippingNotification,
};

/** How a job run alone locks its recipient's contact: for writing when its flow writes contacts. */
const lockFor = (job: { flow: Flow }) => (FLOW_DEFINITIONS[job.flow].writesContacts ? "no key update" : "key share");

/** Runs the handler of the job's flow, its recipient's contact locked first (see `lockRecipientContacts`). */
export async function decide(trx: Trx, job: JobRow): Promise<FlowDecision> {
  const contacts = await lockRecipientContacts(trx, [job], lockFor(job));
  return FLOW_DEFINITIONS[job.flow].decide(trx, job, contacts);
}

/**
 * Decides many jobs in the transaction that holds them, their recipients'
 * contacts locked first (see `lockRecipientContacts`), each flow's records
 * read in one statement: each job with its decision, but for jobs left to run
 * alone (their record was held by a push, see `loadWaiting`; or their
 * recipient changed since its contact was locked).
 */
export async function decideMany<J extends DueJob>(trx: Trx, jobs: readonly J[]): Promise<Array<{ job: J; decision: FlowDecision }>> {
  // Key-share locks, so that no push ever waits for a group: a contact sync writes its contacts only if no one holds them (see `apply`).
  const contacts = await lockRecipientContacts(trx, jobs, "key share");
  const decided: Array<{ job: J; decision: FlowDecision }> = [];
  for (const flow of new Set(jobs.map((job) => job.flow))) {
    const ofFlow = jobs.filter((job) => job.flow === flow);
    const decisions = await FLOW_DEFINITIONS[flow].decideMany(trx, ofFlow, contacts);
    if (decisions.length !== ofFlow.length) throw new Error(`${flow} jobs were not all decided`);
    ofFlow.forEach((job, index) => {
      const decision = decisions[index];
      if (decision) decided.push({ job, decision });
    });
  }
  return decided;
}
