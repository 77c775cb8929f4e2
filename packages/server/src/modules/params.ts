import { z } from "zod";

/**
 * The store in the path. Authorization has already refused anything that is
 * not a positive integer (404) before input parsing runs.
 */
export const storeIdParam = z.coerce.number().int().positive().meta({ description: "The store's numeric id" });
