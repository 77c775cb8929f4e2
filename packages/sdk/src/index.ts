export { CommerceIngestClient, VERSION, type ApiResult, type ClientOptions, type RequestOptions, type UpsertResult } from "./client.js";
export { Checkouts, Customers, Orders, Shipments, type StoreBound, type StoreScope } from "./resources.js";
export {
  AbortError,
  APIError,
  AuthenticationError,
  BadRequestError,
  CommerceIngestError,
  ConnectionError,
  NotFoundError,
  PayloadTooLargeError,
  PermissionDeniedError,
  RateLimitError,
  ServerError,
  TimeoutError,
  UnsupportedMediaTypeError,
  ValidationError,
} from "./errors.js";
export { verifyWebhook, WebhookVerificationError, type VerifyOptions, type WebhookMessage } from "./webhooks.js";
export type {
  Checkout,
  CheckoutInput,
  CheckoutPatch,
  CheckoutStatus,
  Customer,
  CustomerInput,
  CheckoutCustomerInput,
  ErrorBody,
  ErrorDetail,
  Order,
  OrderInput,
  OrderPatch,
  Shipment,
  ShipmentInput,
  ShipmentStatus,
} from "@commerce-ingest/shared";
