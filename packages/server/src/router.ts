import { adminRouter } from "./auth/admin.router.js";
import { customerRouter } from "./modules/customers/customer.router.js";
import { router } from "./trpc.js";

export const appRouter = router({
  customers: customerRouter,
  admin: adminRouter,
});

export type AppRouter = typeof appRouter;
