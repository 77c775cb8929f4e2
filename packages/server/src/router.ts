import { adminRouter } from "./auth/admin.router.js";
import { checkoutRouter } from "./modules/checkouts/checkout.router.js";
import { customerRouter } from "./modules/customers/customer.router.js";
import { orderRouter } from "./modules/orders/order.router.js";
import { shipmentRouter } from "./modules/shipments/shipment.router.js";
import { router } from "./trpc.js";

export const appRouter = router({
  orders: orderRouter,
  customers: customerRouter,
  checkouts: checkoutRouter,
  shipments: shipmentRouter,
  admin: adminRouter,
});

export type AppRouter = typeof appRouter;
