import type { Flow, FlowContent } from "@commerce-ingest/shared";
import type { QueryCreator, RawBuilder } from "kysely";
import type { z } from "zod";
import type { Database, JobRow, RecordType, Trx } from "../../db/types.js";
import { LockOrderConflict } from "../../db/sql.js";
import type { cancelPendingRecoveries, DueJob } from "../jobs.repository.js";

/** Whether a push is historical data: a backfill starts no flow. */
export type TriggerOptions = { backfill: boolean };

/** The store as triggers see it: its id, and the recovery delay for a write that can schedule a recovery. */
export type TriggerStore = { id: number; recoveryDelaySeconds?: number };

/**
 * The names a write statement gives the rows it wrote, each table's as a CTE
 * the triggers read. A write names its CTE with these, and a flow fires `on`
 * one of them: a rename is one change, and the compiler holds both sides to it.
 */
export const WRITTEN = { customers: "customer", orders: "ord", checkouts: "chk", shipments: "ship" } as const;
export type WrittenTable = (typeof WRITTEN)[keyof typeof WRITTEN];

/** How a write statement wrote: the tables it wrote, how many orders, and whether it is one order's push alone. */
export type WriteShape = { tables: readonly WrittenTable[]; orders?: number; alone?: boolean };

/**
 * What in a write fires a flow, declared once by the flow, in SQL over the
 * rows the write wrote (the CTE `on`, read as `w`): the write statements of
 * every entry (a push, pushes gathered, a batch, an import, a PATCH) add it
 * through one registry (`automations/triggers.ts`).
 */
export type FlowTrigger = {
  on: WrittenTable;
  /** When a written row fires the flow (a backfill never does). */
  when: RawBuilder<boolean>;
  /** What makes each firing once: the job's key is the flow, the record's id and this (none: once per record). */
  oncePer: RawBuilder<unknown> | null;
  /** The customer the message goes to. */
  customerId: RawBuilder<number>;
  /** What the job records for its run (checked against the flow's payload schema when it runs). */
  payload: RawBuilder<unknown>;
  /** Runs after the store's recovery delay, not at once. */
  afterRecoveryDelay?: boolean;
};

/** Pending jobs of a flow a write cancels, by the table written: a data-modifying CTE of the write's statement. */
export type FlowCancellation = (qc: QueryCreator<Database>, write: WriteShape) => ReturnType<typeof cancelPendingRecoveries<Database>>;

/** The customer a message goes to, as the flow found it. */
export type Recipient = { id: number; contact_id: number; phone: string | null; first_name: string | null };

/** What a flow decided when it ran: a message for the customer's contact, or a reason to send nothing. */
export type FlowDecision<F extends Flow = Flow> = { send: true; recipient: Recipient; content: FlowContent<F> } | { send: false; reason: string };

export const skip = (reason: string): { send: false; reason: string } => ({ send: false, reason });
export const ERASED = "the customer was erased";

/** The columns of a customer every flow reads to address its message. */
export type CustomerColumns = { customer_id: number; contact_id: number | null; phone: string | null; first_name: string | null; deleted_at: Date | null };

/** A message to the record's customer: `content` for its contact, or nothing when the customer was erased. */
export function messageTo<F extends Flow>(row: CustomerColumns, content: (to: Recipient) => FlowContent<F>): FlowDecision<F> {
  const to = recipientOf(row);
  return to ? { send: true, recipient: to, content: content(to) } : skip(ERASED);
}

/** The recipient of a message to this customer, or nothing for an erased one. */
export function recipientOf(row: CustomerColumns): Recipient | undefined {
  if (row.deleted_at !== null || row.contact_id === null) return undefined;
  return { id: row.customer_id, contact_id: row.contact_id, phone: row.phone, first_name: row.first_name };
}

type Definition<F extends Flow, P extends z.ZodType, Row> = {
  flow: F;
  recordType: RecordType;
  /**
   * What the trigger records on the job and the handler reads back, checked on
   * both sides: a payload that no longer matches fails the job loudly (retried,
   * then `failed` with the reason) instead of being read as something else.
   */
  payload: P;
  /** What in a write fires it (see `FlowTrigger`). */
  trigger: FlowTrigger;
  /** What in a write cancels its pending jobs, by the table written. */
  cancels?: Partial<Record<WrittenTable, FlowCancellation>>;
  /**
   * Reads the records of many jobs in one statement, by record id, holding
   * nothing stronger than a key-share lock on their customers (so an erasure
   * waits for the decision, and a push writing the same rows never does); or,
   * for a flow with `loadWaiting`, locking them for update and leaving out
   * those a push holds at that moment (SKIP LOCKED).
   */
  load: (trx: Trx, recordIds: readonly number[]) => Promise<Map<number, Row>>;
  /**
   * For a flow that must see what a push under way writes to its records
   * (checkout recovery: a checkout being recovered, its customer ordering):
   * reads one record locked for update, waiting for the push that holds it.
   * Its `load` leaves out the records pushes hold, and their jobs leave the
   * group and run alone, with this.
   */
  loadWaiting?: (trx: Trx, recordId: number) => Promise<Row | undefined>;
  /**
   * Decides, from the record as it is now (`undefined`: it no longer exists),
   * what to send or why nothing: an erased customer, a recovered checkout or a
   * newer status turns the job into "nothing to send".
   */
  decideFrom: (row: Row | undefined, payload: z.output<P>) => FlowDecision<F>;
  /**
   * Writes what the decisions to send change, in one statement, in their order
   * (the last one for a row wins). It never waits for a row lock the run does
   * not hold yet: it answers the recipients' contacts it left unwritten
   * because a push or an erasure held them, whose jobs then run alone.
   */
  apply?: (trx: Trx, sends: ReadonlyArray<Extract<FlowDecision<F>, { send: true }>>) => Promise<ReadonlySet<number>>;
  /**
   * True for a flow whose `apply` writes its recipients' contacts: a job of it
   * run alone takes its recipient's contact `for no key update` from the
   * start (see `lockRecipientContacts`), so that it waits for a push holding
   * the contact there, in the lock order, and never later.
   */
  writesContacts?: boolean;
};

export type FlowDefinition<F extends Flow = Flow, P extends z.ZodType = z.ZodType> = Pick<Definition<F, P, unknown>, "flow" | "recordType" | "payload" | "trigger" | "cancels" | "writesContacts"> & {
  /**
   * Decides a claimed job of this flow, alone in its transaction, which holds
   * the contacts `contacts` (see `lockRecipientContacts`). A message whose
   * contact is not among them (the record's customer changed since they were
   * locked) throws a `LockOrderConflict`: the transaction runs again.
   */
  decide(trx: Trx, job: JobRow, contacts: ReadonlySet<number>): Promise<FlowDecision<F>>;
  /**
   * The same for many jobs of this flow at once, in a transaction that holds
   * them and the contacts `contacts`: one decision per job, in order, or
   * `undefined` for a job left to run alone: its record a push held (see
   * `loadWaiting`), or its message's contact is not among `contacts`.
   */
  decideMany(trx: Trx, jobs: readonly DueJob[], contacts: ReadonlySet<number>): Promise<Array<FlowDecision<F> | undefined>>;
};

const sending = <F extends Flow>(decision: FlowDecision<F> | undefined): decision is Extract<FlowDecision<F>, { send: true }> => decision?.send === true;

/**
 * A flow, decided set-based: its jobs can run many to a transaction, their
 * records read in one statement and their writes made in another, without
 * deadlocking with the pushes that write the same rows (a flow that locks its
 * records for update never waits for them when its jobs run together: see
 * `loadWaiting`).
 */
export function defineFlow<F extends Flow, P extends z.ZodType, Row>(definition: Definition<F, P, Row>): FlowDefinition<F, P> {
  const { flow, recordType, payload, trigger, cancels, load, loadWaiting, decideFrom, apply, writesContacts } = definition;
  return {
    flow,
    recordType,
    payload,
    trigger,
    ...(cancels ? { cancels } : {}),
    ...(writesContacts ? { writesContacts } : {}),
    async decide(trx, job, contacts) {
      // The payload is checked before anything is read.
      const checked = payload.parse(job.payload);
      const row = loadWaiting ? await loadWaiting(trx, job.record_id) : (await load(trx, [job.record_id])).get(job.record_id);
      const decision = decideFrom(row, checked);
      if (sending(decision) && !contacts.has(decision.recipient.contact_id)) throw new LockOrderConflict(`the recipient of ${flow} job ${job.id}`);
      const unwritten = sending(decision) ? await apply?.(trx, [decision]) : undefined;
      if (sending(decision) && unwritten?.has(decision.recipient.contact_id)) throw new LockOrderConflict(`the contact of ${flow} job ${job.id}`);
      return decision;
    },
    async decideMany(trx, jobs, contacts) {
      const checked = jobs.map((job) => ({ recordId: job.record_id, payload: payload.parse(job.payload) }));
      const rows = await load(trx, [...new Set(jobs.map((job) => job.record_id))]);
      const decisions = checked.map(({ recordId, payload: input }) => {
        const row = rows.get(recordId);
        // A record a push holds, or gone: the job runs alone, which waits for the push (or finds the record gone).
        if (row === undefined && loadWaiting) return undefined;
        const decision = decideFrom(row, input);
        // A recipient whose contact this run does not hold (it changed since): alone, the job locks it first.
        return sending(decision) && !contacts.has(decision.recipient.contact_id) ? undefined : decision;
      });
      const unwritten = await apply?.(trx, decisions.filter(sending));
      // A contact a push or an erasure held: its job runs alone, which waits for it in the lock order.
      return unwritten?.size ? decisions.map((decision) => (sending(decision) && unwritten.has(decision.recipient.contact_id) ? undefined : decision)) : decisions;
    },
  };
}
