import { z } from "zod";
import { LIMITS } from "./common.js";

/** Schemas of the operator API (teams, stores, keys): not part of the published shop API. */
const name = z.string().trim().min(1).max(LIMITS.name);
const id = z.number().int().positive();
/** 30 days: a longer recovery delay is almost certainly a unit mistake. */
export const MAX_RECOVERY_DELAY_SECONDS = 30 * 24 * 3600;
const recoveryDelay = z.number().int().min(0).max(MAX_RECOVERY_DELAY_SECONDS);
const country = z
  .string()
  .regex(/^[A-Za-z]{2}$/, "must be an ISO 3166 alpha-2 country code")
  .transform((value) => value.toUpperCase());

export const teamCreateSchema = z.object({ name });
export const teamSchema = z.object({ id, name: z.string(), created_at: z.string() });

export const storeCreateSchema = z.object({
  team_id: id,
  name,
  country: country.nullish(),
  recovery_delay_seconds: recoveryDelay.optional(),
});
export const storeUpdateSchema = z.object({
  name: name.optional(),
  country: country.nullish(),
  recovery_delay_seconds: recoveryDelay.optional(),
  paused: z.boolean().optional(),
});
export const storeSchema = z.object({
  id,
  team_id: id,
  name: z.string(),
  country: z.string().nullable(),
  recovery_delay_seconds: z.number().int(),
  paused: z.boolean(),
  created_at: z.string(),
});

export const apiKeyCreateSchema = z.object({ team_id: id, name, store_id: id.nullish() });
export const apiKeySchema = z.object({
  id,
  team_id: id,
  store_id: id.nullable(),
  name: z.string(),
  last4: z.string(),
  created_at: z.string(),
});
export const createdApiKeySchema = apiKeySchema.extend({
  /** The key itself: shown in this response only, never again. */
  key: z.string(),
});

export type Team = z.infer<typeof teamSchema>;
export type Store = z.infer<typeof storeSchema>;
export type ApiKey = z.infer<typeof apiKeySchema>;
export type CreatedApiKey = z.infer<typeof createdApiKeySchema>;

export const FLOWS = ["post_purchase", "checkout_recovery", "contact_sync", "shipping_notification"] as const;
export type Flow = (typeof FLOWS)[number];

export const automationRunSchema = z.object({
  id,
  flow: z.enum(FLOWS),
  record_type: z.string(),
  record_external_id: z.string(),
  status: z.enum(["pending", "running", "succeeded", "failed", "cancelled"]),
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
  status: z.enum(["pending", "sent", "failed"]),
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

/** A message as the messaging webhook delivers it (the body the signature covers). */
export const webhookMessageSchema = z.object({
  /** Stable across retries: a receiver drops a message whose id it has already handled. */
  id: z.string(),
  store_id: z.number().int(),
  flow: z.enum(FLOWS),
  /** The contact's E.164 phone. */
  to: z.string().nullable(),
  content: z.record(z.string(), z.unknown()),
  created_at: z.string(),
});

export type WebhookMessage = z.infer<typeof webhookMessageSchema>;
