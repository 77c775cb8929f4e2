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
  /** False: the request log keeps no bodies of this store's calls (refused calls keep theirs). */
  log_bodies: z.boolean().optional(),
});
export const storeSchema = z.object({
  id,
  team_id: id,
  name: z.string(),
  country: z.string().nullable(),
  recovery_delay_seconds: z.number().int(),
  paused: z.boolean(),
  log_bodies: z.boolean(),
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
