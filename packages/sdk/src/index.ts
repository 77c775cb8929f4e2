export { CommerceIngestClient, VERSION, type ClientOptions, type RequestEvent, type ResponseEvent, type RetryInfo } from "./client.js";
export type { ApiResult, RequestOptions, UpsertResult } from "./transport.js";
export type { Logger, LogLevel } from "./logger.js";
export { ImportHandle, Imports, type ImportCreateParams, type ImportRecords, type ImportWaitOptions } from "./imports.js";
export { BATCH_LIMIT, BATCH_MAX_BYTES, Checkouts, Customers, Orders, Shipments, type BatchOptions, type ListParams, type RecordList, type StoreBound, type StoreScope } from "./resources.js";
export {
  AbortError,
  APIError,
  AuthenticationError,
  BadRequestError,
  CommerceIngestError,
  ConflictError,
  ConnectionError,
  NotFoundError,
  PayloadTooLargeError,
  PermissionDeniedError,
  RateLimitError,
  ServerError,
  TimeoutError,
  UnsupportedMediaTypeError,
  ValidationError,
  type AnyErrorCode,
  type ClientErrorCode,
} from "./errors.js";
export { ERROR_CODES } from "./codes.js";
export { PushQueue, type QueueOptions, type QueuedResource } from "./queue.js";
export { signWebhookForTest, verifyWebhook, WebhookVerificationError, type SignedWebhook, type VerifyOptions } from "./webhooks.js";
export type * from "./types.js";
