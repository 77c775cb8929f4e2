/**
 * Compile-time test (run by `tsc` in the typecheck task): each interface the
 * SDK publishes equals the type the service's own schema infers, field for
 * field, optionality and nullability included. A schema change that the SDK's
 * interfaces do not follow fails the build.
 */
import type * as shared from "@commerce-ingest/shared";
import type * as sdk from "../src/index.js";

/** True only when A and B are the same type (not merely assignable). */
type Equals<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
/** Compiles only when given `true`. */
type Assert<T extends true> = T;

export type Checks = [
  Assert<Equals<sdk.CustomerInput, shared.CustomerInput>>,
  Assert<Equals<sdk.CheckoutCustomerInput, shared.CheckoutCustomerInput>>,
  Assert<Equals<sdk.Customer, shared.Customer>>,
  Assert<Equals<sdk.CustomerRecord, shared.CustomerRecord>>,
  Assert<Equals<sdk.OrderInput, shared.OrderInput>>,
  Assert<Equals<sdk.OrderPatch, shared.OrderPatch>>,
  Assert<Equals<sdk.Order, shared.Order>>,
  Assert<Equals<sdk.OrderRecord, shared.OrderRecord>>,
  Assert<Equals<sdk.CheckoutStatus, shared.CheckoutStatus>>,
  Assert<Equals<sdk.CheckoutInput, shared.CheckoutInput>>,
  Assert<Equals<sdk.CheckoutPatch, shared.CheckoutPatch>>,
  Assert<Equals<sdk.Checkout, shared.Checkout>>,
  Assert<Equals<sdk.CheckoutRecord, shared.CheckoutRecord>>,
  Assert<Equals<sdk.ShipmentStatus, shared.ShipmentStatus>>,
  Assert<Equals<sdk.ShipmentInput, shared.ShipmentInput>>,
  Assert<Equals<sdk.Shipment, shared.Shipment>>,
  Assert<Equals<sdk.ShipmentRecord, shared.ShipmentRecord>>,
  Assert<Equals<sdk.ErrorDetail, shared.ErrorDetail>>,
  // The body this service sends is one the SDK reads; the SDK also reads a body without `code`, from an older server.
  Assert<Equals<Omit<sdk.ErrorBody, "code">, Omit<shared.ErrorBody, "code">>>,
  Assert<shared.ErrorBody extends sdk.ErrorBody ? true : false>,
  Assert<Equals<sdk.Flow, shared.Flow>>,
  Assert<Equals<sdk.FlowContents[sdk.Flow], shared.FlowContent>>,
  Assert<Equals<sdk.WebhookMessage, shared.WebhookMessage>>,
  Assert<Equals<sdk.ErrorCode, shared.ErrorWireCode>>,
  Assert<Equals<sdk.CustomerListItem, shared.CustomerListItem>>,
  Assert<Equals<sdk.Page<sdk.OrderRecord>, shared.Page<shared.OrderRecord>>>,
  Assert<Equals<sdk.Import, shared.Import>>,
  Assert<Equals<sdk.ImportError, shared.ImportError>>,
];
