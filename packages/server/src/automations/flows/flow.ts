import type { Flow, FlowContent } from "@commerce-ingest/shared";
import type { z } from "zod";
import type { JobRow, RecordType, Trx } from "../../db/types.js";
import type { DueJob, NewJob } from "../jobs.repository.js";

/** Whether a push is historical data: a backfill starts no flow. */
export type TriggerOptions = { backfill: boolean };

/** The store as triggers see it. */
export type TriggerStore = { id: number; recoveryDelaySeconds: number };

/** The customer a message goes to, as the flow found it. */
export type Recipient = { id: number; contact_id: number; phone: string | null; first_name: string | null };

/** What a flow decided when it ran: a message for the customer's contact, or a reason to send nothing. */
export type FlowDecision<F extends Flow = Flow> = { send: true; recipient: Recipient; content: FlowContent<F> } | { send: false; reason: string };

export const skip = (reason: string): { send: false; reason: string } => ({ send: false, reason });
export const ERASED = "the customer was erased";

/** The columns of a customer every flow reads to address its message. */
export type CustomerColumns = { customer_id: number; contact_id: number | null; phone: string | null; first_name: string | null; deleted_at: Date | null };

/** The recipient of a message to this customer, or nothing for an erased one. */
export function recipientOf(row: CustomerColumns): Recipient | undefined {
  if (row.deleted_at !== null || row.contact_id === null) return undefined;
  return { id: row.customer_id, contact_id: row.contact_id, phone: row.phone, first_name: row.first_name };
}

/** A job of one flow as its trigger describes it; the definition adds the flow, record type and checked payload. */
export type JobFields = Omit<NewJob, "flow" | "record_type" | "payload">;

type Definition<F extends Flow, P extends z.ZodType> = {
  flow: F;
  recordType: RecordType;
  /**
   * What the trigger records on the job and the handler reads back, checked on
   * both sides: a payload that no longer matches fails the job loudly (retried,
   * then `failed` with the reason) instead of being read as something else.
   */
  payload: P;
  /**
   * Decides in the job's transaction, from the records as they are now, what to
   * send or why nothing: an erased customer, a recovered checkout or a newer
   * status turns the job into "nothing to send".
   */
  handle(trx: Trx, job: JobRow, payload: z.output<P>): Promise<FlowDecision<F>>;
};

export type FlowDefinition<F extends Flow = Flow, P extends z.ZodType = z.ZodType> = Definition<F, P> & {
  /** The job for one occasion of this flow, its payload checked against the schema. */
  job(fields: JobFields, payload: z.input<P>): NewJob;
  /** Runs the handler on a claimed job of this flow. */
  decide(trx: Trx, job: JobRow): Promise<FlowDecision<F>>;
  /**
   * The same for many jobs of this flow at once, one decision per job, in
   * order: present when the flow is decided set-based (see `defineSetFlow`),
   * so its jobs can share a transaction.
   */
  decideMany?: (trx: Trx, jobs: readonly DueJob[]) => Promise<Array<FlowDecision<F>>>;
};

export function defineFlow<F extends Flow, P extends z.ZodType>(definition: Definition<F, P>): FlowDefinition<F, P> {
  return {
    ...definition,
    job: (fields, payload) => ({ ...fields, flow: definition.flow, record_type: definition.recordType, payload: definition.payload.parse(payload) as Record<string, unknown> }),
    decide: async (trx, job) => definition.handle(trx, job, definition.payload.parse(job.payload)),
  };
}

type SetDefinition<F extends Flow, P extends z.ZodType, Row> = Omit<Definition<F, P>, "handle"> & {
  /**
   * Reads the records of many jobs in one statement, by record id, holding
   * nothing stronger than a key-share lock on their customers (so an erasure
   * waits for the decision, and a push writing the same rows never does).
   */
  load: (trx: Trx, recordIds: readonly number[]) => Promise<Map<number, Row>>;
  /** Decides from the record as it was read (`undefined`: it no longer exists). */
  decideFrom: (row: Row | undefined, payload: z.output<P>) => FlowDecision<F>;
  /**
   * Writes what the decisions to send change, in one statement, in their order
   * (the last one for a row wins), taking row locks in the order pushes take them.
   */
  apply?: (trx: Trx, sends: ReadonlyArray<Extract<FlowDecision<F>, { send: true }>>) => Promise<void>;
};

/**
 * A flow decided set-based: its jobs can run many to a transaction, their
 * records read in one statement and their writes made in another, without
 * waiting on or deadlocking with the pushes that write the same rows. A flow
 * that locks for update (checkout recovery) is defined with `defineFlow`, and
 * runs each job in a transaction of its own.
 */
export function defineSetFlow<F extends Flow, P extends z.ZodType, Row>(definition: SetDefinition<F, P, Row>): FlowDefinition<F, P> {
  const { load, decideFrom, apply, ...rest } = definition;
  const decideMany = async (trx: Trx, jobs: readonly DueJob[]) => {
    const rows = await load(trx, [...new Set(jobs.map((job) => job.record_id))]);
    const decisions = jobs.map((job) => decideFrom(rows.get(job.record_id), definition.payload.parse(job.payload)));
    await apply?.(trx, decisions.filter((decision): decision is Extract<FlowDecision<F>, { send: true }> => decision.send));
    return decisions;
  };
  return {
    ...defineFlow({
      ...rest,
      handle: async (trx, job) => {
        const [decision] = await decideMany(trx, [job]);
        if (!decision) throw new Error(`a ${definition.flow} job was not decided`);
        return decision;
      },
    }),
    decideMany,
  };
}
