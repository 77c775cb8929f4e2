export * from "./errors.js";
export * from "./common.js";
export * from "./customer.js";
export * from "./admin.js";
export * from "./order.js";
