import { checkoutInputSchema, checkoutPatchSchema, checkoutSchema } from "@commerce-ingest/shared";
import { z } from "zod";
import { storeBodyProcedure } from "../../auth/auth.middleware.js";
import { router } from "../../trpc.js";
import { storeIdParam } from "../params.js";
import { validateBody } from "../validate.js";
import * as checkouts from "./checkout.service.js";

const tags = ["checkouts"];

export const checkoutRouter = router({
  upsert: storeBodyProcedure
    .meta({
      openapi: {
        method: "POST",
        path: "/api/v1/stores/{store_id}/checkouts",
        tags,
        summary: "Create or update an abandoned checkout",
        description:
          "Upserts on (store_id, external_id). A new checkout is `abandoned`; a re-push turns `active` into `abandoned` " +
          "and keeps any other state. 201 when created, 200 when updated.",
        protect: true,
      },
    })
    .use(validateBody(checkoutInputSchema, [["customer", "phone"]]))
    .input(checkoutInputSchema.extend({ store_id: storeIdParam }))
    .output(checkoutSchema)
    .mutation(async ({ ctx, input: { store_id: _storeId, ...body } }) => {
      const { checkout, created } = await checkouts.upsertCheckout(ctx.db, ctx.store, body, { backfill: ctx.backfill });
      ctx.response.status = created ? 201 : 200;
      return checkout;
    }),
  update: storeBodyProcedure
    .meta({
      openapi: {
        method: "PATCH",
        path: "/api/v1/stores/{store_id}/checkouts/{external_id}",
        tags,
        summary: "Change a checkout's status, recovery URL, tags or metadata",
        description: "Every field is optional; status may be any of the five states. 404 when the checkout does not exist.",
        protect: true,
      },
    })
    .input(checkoutPatchSchema.extend({ store_id: storeIdParam, external_id: z.string() }))
    .output(checkoutSchema)
    .mutation(({ ctx, input: { store_id: _storeId, external_id, ...patch } }) =>
      checkouts.updateCheckout(ctx.db, ctx.store, external_id, patch, { backfill: ctx.backfill }),
    ),
});
