import type { Flow } from "@commerce-ingest/shared";
import type { JobRow, Trx } from "../../db/types.js";
import { checkoutRecovery } from "./checkout-recovery.js";
import { contactSync } from "./contact-sync.js";
import type { FlowDecision, FlowDefinition } from "./flow.js";
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

/** Runs the handler of the job's flow. */
export function decide(trx: Trx, job: JobRow): Promise<FlowDecision> {
  return FLOW_DEFINITIONS[job.flow].decide(trx, job);
}
