import { customerInputSchema, customerSchema } from "@commerce-ingest/shared";
import { z } from "zod";
import { storeBodyProcedure, storeProcedure } from "../../auth/auth.middleware.js";
import { router } from "../../trpc.js";
import { storeIdParam } from "../params.js";
import { validateBody } from "../validate.js";
import * as customers from "./customer.service.js";

const tags = ["customers"];

export const customerRouter = router({
  upsert: storeBodyProcedure
    .meta({
      openapi: {
        method: "POST",
        path: "/api/v1/stores/{store_id}/customers",
        tags,
        summary: "Create or update a customer",
        description:
          "Upserts on (store_id, external_id); without external_id the E.164 phone is the key. " +
          "Fields present replace, absent fields keep their value, null clears. 201 when created, 200 when updated.",
        protect: true,
      },
    })
    .use(validateBody(customerInputSchema, [["phone"]]))
    .input(customerInputSchema.extend({ store_id: storeIdParam }))
    .output(customerSchema)
    .mutation(async ({ ctx, input: { store_id: _storeId, ...body } }) => {
      const { customer, created } = await customers.upsertCustomer(ctx.db, ctx.store, body, { backfill: ctx.backfill });
      ctx.response.status = created ? 201 : 200;
      return customer;
    }),
  delete: storeProcedure
    .meta({
      openapi: {
        method: "DELETE",
        path: "/api/v1/stores/{store_id}/customers/{external_id}",
        tags,
        summary: "Erase a customer (privacy-law erasure)",
        description:
          "Soft-deletes the customer and clears its personal fields; pending messages to it are cancelled. " +
          "Always 204, also for an unknown or already erased customer. A phone-keyed customer is named by its URL-encoded E.164 phone.",
        protect: true,
      },
    })
    .input(z.object({ store_id: storeIdParam, external_id: z.string() }))
    .output(z.void())
    .mutation(async ({ ctx, input }) => {
      await customers.eraseCustomer(ctx.db, ctx.store, input.external_id);
      ctx.response.status = 204;
    }),
});
