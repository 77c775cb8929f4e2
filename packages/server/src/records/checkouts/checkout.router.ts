import { checkoutInputSchema, checkoutPageSchema, checkoutPatchSchema, checkoutRecordSchema, checkoutSchema } from "@commerce-ingest/shared";
import { router } from "../../trpc.js";
import { patchProcedure, readProcedures, upsertSpec, writeProcedures } from "../procedures.js";
import * as checkouts from "./checkout.service.js";

export const checkoutUpsert = upsertSpec({
  resource: "checkouts",
  summary: "Create or update an abandoned checkout",
  description:
    "Upserts on (store_id, external_id). A new checkout is `abandoned`; a re-push turns `active` into `abandoned` " +
    "and keeps any other state. 201 when created, 200 when updated.",
  body: checkoutInputSchema,
  phonePaths: [["customer", "phone"]],
  example: {
    external_id: "chk-5521",
    abandoned_at: "2026-11-20T13:40:00Z",
    total_price: 89.9,
    currency: "USD",
    recovery_url: "https://shop.example/checkouts/chk-5521/recover",
    customer: { external_id: "c-1001", phone: "+14155552671", first_name: "Ada" },
    line_items: [{ sku: "MUG-1", title: "Mug", quantity: 1, price: 89.9 }],
  },
  output: checkoutSchema,
  write: (call, bodies) => checkouts.upsertCheckouts(call.db, call.store, bodies, call.options),
});

export const checkoutRouter = router({
  ...readProcedures({ resource: "checkouts", summaries: { list: "List checkouts, in the order they changed", retrieve: "Read a checkout back" }, record: checkoutRecordSchema, page: checkoutPageSchema, read: checkouts.checkoutReadBack }),
  ...writeProcedures(checkoutUpsert),
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
