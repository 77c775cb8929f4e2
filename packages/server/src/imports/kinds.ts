import type { ImportKind } from "@commerce-ingest/shared";
import type { z } from "zod";
import { checkoutWrite } from "../records/checkouts/checkout.service.js";
import { customerWrite } from "../records/customers/customer.service.js";
import { orderWrite } from "../records/orders/order.service.js";
import { shipmentWrite } from "../records/shipments/shipment.service.js";
import type { UpsertSpec } from "../records/write-path.js";

/** Each kind's write contract, as its push and its batch take it: an import's lines are written by the same code. */
export const IMPORT_WRITES: { readonly [kind in ImportKind]: UpsertSpec<z.ZodType, object> } = {
  orders: orderWrite,
  customers: customerWrite,
  checkouts: checkoutWrite,
  shipments: shipmentWrite,
};
