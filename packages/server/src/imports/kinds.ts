import type { ImportKind } from "@commerce-ingest/shared";
import type { z } from "zod";
import { checkoutUpsert } from "../records/checkouts/checkout.router.js";
import { customerUpsert } from "../records/customers/customer.router.js";
import { orderUpsert } from "../records/orders/order.router.js";
import type { UpsertSpec } from "../records/procedures.js";
import { shipmentUpsert } from "../records/shipments/shipment.router.js";

/** Each kind's upsert, as its push and its batch declare it: an import's lines are written by the same code. */
export const IMPORT_WRITES: { readonly [kind in ImportKind]: UpsertSpec<z.ZodType, object> } = {
  orders: orderUpsert,
  customers: customerUpsert,
  checkouts: checkoutUpsert,
  shipments: shipmentUpsert,
};
