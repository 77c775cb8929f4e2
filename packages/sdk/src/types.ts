/**
 * The API's data, as plain interfaces: what you send and what you get back.
 * They are written out by hand so that an editor's hover reads like the API
 * reference; a compile-time test keeps each one equal to the service's own
 * schema, field for field.
 *
 * Merge rules for every upsert and PATCH: a field you send replaces the stored
 * value, a field you leave out keeps it, and `null` clears it.
 */

export type * from "./types/common.js";
export type * from "./types/customers.js";
export type * from "./types/orders.js";
export type * from "./types/checkouts.js";
export type * from "./types/shipments.js";
export type * from "./types/messages.js";
export type * from "./types/imports.js";
