import { customerPageSchema, customerRecordSchema } from "@commerce-ingest/shared";
import { z } from "zod";
import { rest, router } from "../../trpc.js";
import { recordParams, STORE_ERRORS, storeProcedure, readProcedures, writeProcedures } from "../procedures.js";
import * as customers from "./customer.service.js";
import { customerWrite } from "./customer.service.js";

export const customerRouter = router({
  ...readProcedures({
    resource: "customers",
    summaries: { list: "List customers, in the order they changed (erased ones without personal data)", retrieve: "Read a customer back, with its E.164 phone" },
    record: customerRecordSchema,
    page: customerPageSchema,
    read: customers.customerReadBack,
  }),
  ...writeProcedures(customerWrite, {
    summary: "Create or update a customer",
    description:
      "Upserts on (store_id, external_id); without external_id the E.164 phone is the key. " +
      "Fields present replace, absent fields keep their value, null clears. 201 when created, 200 when updated.",
  }),
  delete: storeProcedure
    .meta(rest({
        method: "DELETE",
        path: "/api/v1/stores/{store_id}/customers/{external_id}",
        tags: ["customers"],
        summary: "Erase a customer (privacy-law erasure)",
        description:
          "Soft-deletes the customer and clears its personal fields; pending messages to it are cancelled. " +
          "Always 204, also for an unknown or already erased customer. A phone-keyed customer is named by its URL-encoded E.164 phone.",
        protect: true,
      }, { success: { 204: "Erased (or nothing to erase); no body" }, errors: STORE_ERRORS }))
    .input(recordParams)
    .output(z.void())
    .mutation(async ({ ctx, input }) => {
      await customers.eraseCustomer(ctx.db, ctx.store, input.external_id);
      ctx.response.status = 204;
    }),
});
