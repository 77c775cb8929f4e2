import { adminRouter } from "./api/admin.router.js";
import { checkoutRouter } from "./records/checkouts/checkout.router.js";
import { customerRouter } from "./records/customers/customer.router.js";
import { orderRouter } from "./records/orders/order.router.js";
import { importRouter } from "./imports/import.router.js";
import { shipmentRouter } from "./records/shipments/shipment.router.js";
import { router } from "./trpc.js";

export const appRouter = router({
  orders: orderRouter,
  customers: customerRouter,
  checkouts: checkoutRouter,
  shipments: shipmentRouter,
  imports: importRouter,
  admin: adminRouter,
});

export type AppRouter = typeof appRouter;
