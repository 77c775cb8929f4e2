import { adminRouter } from "./auth/admin.router.js";
import { checkoutRouter } from "./modules/checkouts/checkout.router.js";
import { customerRouter } from "./modules/customers/customer.router.js";
import { orderRouter } from "./modules/orders/order.router.js";
import { importRouter } from "./imports/import.router.js";
import { shipmentRouter } from "./modules/shipments/shipment.router.js";
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
