import { z } from "zod";
import { FLOWS } from "./flows.js";

/** What the operator (and the console) sees of a store's automations. */
const id = z.number().int().positive();

export const JOB_STATUSES = ["pending", "running", "succeeded", "failed", "cancelled"] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];
export const MESSAGE_STATUSES = ["pending", "sent", "failed"] as const;
export type MessageStatus = (typeof MESSAGE_STATUSES)[number];

export const automationRunSchema = z.object({
  id,
  flow: z.enum(FLOWS),
  record_type: z.string(),
  record_external_id: z.string(),
  status: z.enum(JOB_STATUSES),
  attempts: z.number().int(),
  error: z.string().nullable(),
  run_at: z.string(),
  created_at: z.string(),
  finished_at: z.string().nullable(),
});

export const messageSchema = z.object({
  id: z.string(),
  run_id: id,
  flow: z.enum(FLOWS),
  status: z.enum(MESSAGE_STATUSES),
  to_phone: z.string().nullable(),
  content: z.record(z.string(), z.unknown()),
  provider: z.string(),
  created_at: z.string(),
  sent_at: z.string().nullable(),
});

export const activitySchema = z.object({
  runs: z.array(automationRunSchema),
  messages: z.array(messageSchema),
});

export type AutomationRun = z.infer<typeof automationRunSchema>;
export type Message = z.infer<typeof messageSchema>;
export type Activity = z.infer<typeof activitySchema>;
