import type { ErrorDetail } from "@commerce-ingest/shared";
import type { z } from "zod";
import { AppError } from "../errors.js";
import { middleware } from "../trpc.js";
import { toDetails } from "../validation.js";
import { normalizePhone } from "./customers/phone.js";

function at(value: unknown, path: readonly string[]): unknown {
  return path.reduce<unknown>((node, key) => (typeof node === "object" && node !== null ? (node as Record<string, unknown>)[key] : undefined), value);
}

/**
 * Validates the body with its schema and its phones in the store's country
 * together, so one 422 names every failing field, phones included. Runs after
 * authorization (the store's country is known) and before the procedure's own
 * input parsing, which then only sees valid input.
 */
export function validateBody(schema: z.ZodType, phonePaths: ReadonlyArray<readonly string[]>) {
  return middleware(async ({ ctx, getRawInput, next }) => {
    const raw = await getRawInput();
    const result = schema.safeParse(raw);
    const details: ErrorDetail[] = result.success ? [] : toDetails(result.error.issues);
    const store = "store" in ctx ? (ctx.store as { country: string | null }) : undefined;
    for (const path of phonePaths) {
      const dotted = path.join(".");
      const phone = at(raw, path);
      if (typeof phone !== "string" || details.some((detail) => detail.path === dotted)) continue;
      const normalized = normalizePhone(phone, store?.country ?? null);
      if (!normalized.ok) details.push({ path: dotted, message: normalized.message });
    }
    if (details.length > 0) throw new AppError("VALIDATION_FAILED", details);
    return next();
  });
}
