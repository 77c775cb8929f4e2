import { z } from "zod";
import { FLOWS } from "./flows.js";

/** What the operator (and the console) sees of a store's automations. */
const id = z.number().int().positive();

export const JOB_STATUSES = ["pending", "running", "succeeded", "failed", "cancelled"] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];
export const MESSAGE_STATUSES = ["pending", "sent", "failed"] as const;
export type MessageStatus = (typeof MESSAGE_STATUSES)[number];

const flow = z.enum(FLOWS);
const flows = FLOWS.map((name) => `\`${name}\``).join(", ");

export const automationRunSchema = z.object({
  id: id.meta({ description: "The run's id.", example: 42 }),
  flow: flow.meta({ description: `The automation that runs: one of ${flows}.`, example: "checkout_recovery" }),
  record_type: z.string().meta({ description: "The kind of record that triggered it: `order`, `checkout`, `customer` or `shipment`.", example: "checkout" }),
  record_external_id: z.string().meta({ description: "The triggering record's `external_id` in the store.", example: "chk-5521" }),
  status: z.enum(JOB_STATUSES).meta({ description: "One of `pending`, `running`, `succeeded`, `failed`, `cancelled`.", example: "succeeded" }),
  attempts: z.number().int().meta({ description: "How many times the run has been tried so far (failures are retried with backoff).", example: 1 }),
  error: z
    .string()
    .nullable()
    .meta({ description: "Why the last attempt failed or the run was cancelled; `null` when it did not.", example: "the checkout became recovered" }),
  run_at: z.string().meta({
    description: "When the run is or was due: ISO 8601 with milliseconds and a numeric offset.",
    example: "2026-11-20T14:40:00.000+00:00",
  }),
  created_at: z.string().meta({
    description: "When the triggering write recorded the run: ISO 8601 with milliseconds and a numeric offset.",
    example: "2026-11-20T13:40:00.000+00:00",
  }),
  finished_at: z.string().nullable().meta({
    description: "When the run succeeded, failed for good or was cancelled; `null` while it is pending or running.",
    example: "2026-11-20T14:40:01.000+00:00",
  }),
});

export const messageSchema = z.object({
  id: z.string().meta({
    description: "The message's id, as the webhook delivers it (also in `X-Message-Id`).",
    example: "3f1c2a9e-6b1d-4c53-9a55-0e7a1b2c3d4e",
  }),
  run_id: id.meta({ description: "The id of the automation run that made the message.", example: 42 }),
  flow: flow.meta({ description: `The automation that made it: one of ${flows}.`, example: "checkout_recovery" }),
  status: z.enum(MESSAGE_STATUSES).meta({ description: "One of `pending` (not yet delivered), `sent`, `failed`.", example: "sent" }),
  to_phone: z.string().nullable().meta({ description: "The recipient's E.164 phone.", example: "+14155552671" }),
  content: z.record(z.string(), z.unknown()).meta({
    description: "What the message says: the flow's content, as the webhook delivers it.",
    example: { template: "checkout_recovery", first_name: "Ada" },
  }),
  provider: z.string().meta({ description: "How the message was delivered: `webhook`, or `record` when it is only recorded.", example: "webhook" }),
  created_at: z.string().meta({
    description: "When the message was made: ISO 8601 with milliseconds and a numeric offset.",
    example: "2026-11-20T14:40:00.000+00:00",
  }),
  sent_at: z.string().nullable().meta({
    description: "When the message was delivered: ISO 8601 with milliseconds and a numeric offset; `null` until then.",
    example: "2026-11-20T14:40:01.000+00:00",
  }),
});

export const activitySchema = z.object({
  runs: z.array(automationRunSchema).meta({ description: "The store's most recent automation runs, newest first." }),
  messages: z.array(messageSchema).meta({ description: "The store's most recent messages, newest first." }),
});

export type AutomationRun = z.infer<typeof automationRunSchema>;
export type Message = z.infer<typeof messageSchema>;
export type Activity = z.infer<typeof activitySchema>;
