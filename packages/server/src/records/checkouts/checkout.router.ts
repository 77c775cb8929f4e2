import { checkoutPageSchema, checkoutPatchSchema, checkoutRecordSchema, checkoutSchema } from "@commerce-ingest/shared";
import { router } from "../../trpc.js";
import { patchProcedure, readProcedures, writeProcedures } from "../procedures.js";
import * as checkouts from "./checkout.service.js";
import { checkoutWrite } from "./checkout.service.js";

export const checkoutRouter = router({
  ...readProcedures({ resource: "checkouts", summaries: { list: "List checkouts, in the order they changed", retrieve: "Read a checkout back" }, record: checkoutRecordSchema, page: checkoutPageSchema, read: checkouts.checkoutReadBack }),
  ...writeProcedures(checkoutWrite, {
    summary: "Create or update an abandoned checkout",
    description:
      "Upserts on (store_id, external_id). A new checkout is `abandoned`; a re-push turns `active` into `abandoned` " +
      "and keeps any other state. 201 when created, 200 when updated.",
  }),
  update: patchProcedure({
    resource: "checkouts",
    summary: "Change a checkout's status, recovery URL, tags or metadata",
    description: "Every field is optional; status may be any of the five states. 404 when the checkout does not exist.",
    body: checkoutPatchSchema,
    example: { status: "recovered" },
    output: checkoutSchema,
    notFound: "CHECKOUT_NOT_FOUND",
    update: async (call, externalId, patch) => {
      const { checkout, stale } = await checkouts.updateCheckout(call.db, call.store, externalId, patch, call.options);
      return { record: checkout, stale };
    },
  }),
});
