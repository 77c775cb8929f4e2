import type { Executor } from "../db/types.js";
import { cancelPendingJobs, redactCustomerMessages } from "./jobs.repository.js";

/** Nothing more reaches an erased customer (a recovery already scheduled included), and what was sent no longer says to whom or what. */
export async function customerErased(trx: Executor, customerId: number): Promise<void> {
  await cancelPendingJobs(trx, { customer_id: customerId }, "the customer was erased");
  await redactCustomerMessages(trx, customerId);
}
