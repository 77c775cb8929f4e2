/**
 * Every error the service answers with, on the REST API and the operator API:
 * the HTTP status, the exact message of the contract, and the stable `code`
 * every error body carries (what clients branch on: a message may be reworded,
 * a code never changes), with whether a retry of the same request can help and
 * what it means. The server's single error type carries one of these entries
 * and is answered through this table; the OpenAPI document's error enum and
 * examples are built from it too.
 */
export const ERRORS = {
  API_KEY_MISSING: { status: 401, message: "API key is missing", code: "api_key_missing", retry: false, meaning: "No `Authorization: Bearer <key>` header." },
  API_KEY_INVALID: { status: 401, message: "Invalid API key", code: "invalid_api_key", retry: false, meaning: "The key is unknown, deleted, or not sent as `Bearer <key>`." },
  STORE_FORBIDDEN: { status: 403, message: "API key does not authorize this store", code: "store_not_authorized", retry: false, meaning: "The key's team does not own the store, or the key is restricted to another store." },
  STORE_NOT_FOUND: { status: 404, message: "Store not found or paused", code: "store_not_found", retry: false, meaning: "No such store in the key's team, or the store is paused." },
  ORDER_NOT_FOUND: { status: 404, message: "Order not found", code: "order_not_found", retry: false, meaning: "No order with this `external_id` in the store." },
  CHECKOUT_NOT_FOUND: { status: 404, message: "Checkout not found", code: "checkout_not_found", retry: false, meaning: "No checkout with this `external_id` in the store." },
  CUSTOMER_NOT_FOUND: { status: 404, message: "Customer not found", code: "customer_not_found", retry: false, meaning: "No active customer with this `external_id` in the store (absent or erased)." },
  SHIPMENT_NOT_FOUND: { status: 404, message: "Shipment not found", code: "shipment_not_found", retry: false, meaning: "No shipment with this `external_id` in the store." },
  SHIPMENT_ORDER_NOT_FOUND: { status: 422, message: "Order not found", code: "shipment_order_not_found", retry: false, meaning: "The shipment's `order_external_id` names no order of the store: push the order first." },
  MALFORMED_JSON: { status: 400, message: "Malformed JSON body", code: "malformed_json", retry: false, meaning: "The body is not valid JSON." },
  MALFORMED_REQUEST: { status: 400, message: "Malformed HTTP request", code: "malformed_request", retry: false, meaning: "The request could not be read as HTTP (a lying or negative `Content-Length`, chunked with a length); the connection is closed." },
  HEADERS_TOO_LARGE: { status: 431, message: "Request headers too large", code: "headers_too_large", retry: false, meaning: "The request's headers are over 16 KiB; the connection is closed." },
  REQUEST_TIMEOUT: { status: 408, message: "Request timeout", code: "request_timeout", retry: true, meaning: "The request's headers or body took too long to arrive (an import's upload: silent, or slower than its minimum rate); send it again, whole." },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, message: "Content-Type must be application/json", code: "unsupported_media_type", retry: false, meaning: "The body is not sent as `application/json`." },
  BODY_TOO_LARGE: { status: 413, message: "Request body too large", code: "body_too_large", retry: false, meaning: "The body is over the size limit (1 MiB by default): send fewer records per request." },
  VALIDATION_FAILED: { status: 422, message: "Invalid request body", code: "validation_failed", retry: false, meaning: "One or more fields are invalid: `details` names each." },
  RATE_LIMITED: { status: 429, message: "Rate limit exceeded", code: "rate_limited", retry: true, meaning: "Too many requests for this key: retry after `Retry-After` seconds." },
  IDEMPOTENCY_KEY_REUSED: { status: 422, message: "Idempotency-Key reused with a different request", code: "idempotency_key_reused", retry: false, meaning: "This `Idempotency-Key` was used with another request in the last 24 hours: use a new key." },
  REQUEST_IN_PROGRESS: { status: 409, message: "Request in progress", code: "request_in_progress", retry: true, meaning: "A request with this `Idempotency-Key` is still running: retry after `Retry-After` seconds to get its answer." },
  IMPORT_NOT_FOUND: { status: 404, message: "Import not found", code: "import_not_found", retry: false, meaning: "No import with this id in the store." },
  IMPORT_FINISHED: { status: 409, message: "Import already finished", code: "import_finished", retry: false, meaning: "The import has succeeded, failed or been cancelled: there is nothing left to cancel." },
  IMPORT_MEDIA_TYPE: { status: 415, message: "Content-Type must be application/x-ndjson", code: "unsupported_import_type", retry: false, meaning: "An import's body is NDJSON (`application/x-ndjson`), optionally with `Content-Encoding: gzip`." },
  IMPORT_FILE_INVALID: { status: 422, message: "The file is not NDJSON of this kind", code: "import_file_invalid", retry: false, meaning: "The file cannot be read as NDJSON of the import's kind: its first lines are not JSON objects or none of them is a record of the kind, or its bytes are not what `Content-Encoding` says (gzip sent unlabelled, or a broken gzip stream); `details` says which. Found in the file's first chunk: nothing was stored; found later: the import is `failed` with this code." },
  UNSUPPORTED_CONTENT_ENCODING: { status: 415, message: "Content-Encoding must be gzip or identity", code: "unsupported_content_encoding", retry: false, meaning: "An import's body is sent as it is or gzipped once (`Content-Encoding: gzip`); `br`, `deflate` and encodings applied twice are not taken." },
  UPLOADS_BUSY: { status: 503, message: "Too many uploads at once", code: "uploads_busy", retry: true, meaning: "This server is receiving as many import files as it takes at once: retry after `Retry-After` seconds. Nothing was read or stored." },
  UPLOAD_INTERRUPTED: { status: 400, message: "Upload interrupted", code: "upload_interrupted", retry: true, meaning: "The connection ended before the whole file arrived: the import is `failed` and nothing of it is merged; send the file again." },
  IMPORT_TOO_LARGE: { status: 413, message: "Import too large", code: "import_too_large", retry: false, meaning: "The import's file, uncompressed, is over its size limit (1 GiB by default): split it into several imports." },
  NOT_FOUND: { status: 404, message: "Not found", code: "not_found", retry: false, meaning: "No such path." },
  METHOD_NOT_ALLOWED: { status: 405, message: "Method not allowed", code: "method_not_allowed", retry: false, meaning: "The path exists, not with this method: `Allow` lists those it takes." },
  SERVICE_UNAVAILABLE: { status: 503, message: "Service unavailable", code: "service_unavailable", retry: true, meaning: "The database could not be reached in time, or the request passed its deadline: retry after `Retry-After` seconds (the write may have been stored; upserts and `Idempotency-Key` make a retry safe)." },
  SERVER_BUSY: { status: 503, message: "Service unavailable", code: "server_busy", retry: true, meaning: "This server holds as many request bodies as its memory allows at once: retry after `Retry-After` seconds. Nothing was read or stored." },
  INTERNAL: { status: 500, message: "Internal server error", code: "internal_error", retry: true, meaning: "Unexpected: quote the `X-Request-Id`. Retrying an upsert is safe." },
  ADMIN_TOKEN_MISSING: { status: 401, message: "Admin token is missing", code: "admin_token_missing", retry: false, meaning: "The operator API needs `Authorization: Bearer <ADMIN_TOKEN>`." },
  ADMIN_TOKEN_INVALID: { status: 401, message: "Invalid admin token", code: "invalid_admin_token", retry: false, meaning: "The operator token is wrong." },
  TEAM_NOT_FOUND: { status: 404, message: "Team not found", code: "team_not_found", retry: false, meaning: "No such team." },
  ADMIN_STORE_NOT_FOUND: { status: 404, message: "Store not found", code: "admin_store_not_found", retry: false, meaning: "No such store." },
  KEY_NOT_FOUND: { status: 404, message: "API key not found", code: "key_not_found", retry: false, meaning: "No such API key." },
  SIGN_IN_REQUIRED: { status: 401, message: "Sign in first", code: "sign_in_required", retry: false, meaning: "The console needs a session." },
  SIGN_IN_FAILED: { status: 401, message: "Wrong e-mail or password", code: "sign_in_failed", retry: false, meaning: "The e-mail or the password is wrong." },
  SIGN_IN_THROTTLED: { status: 429, message: "Too many sign-in attempts; try again later", code: "sign_in_throttled", retry: true, meaning: "Too many failed sign-ins: retry after `Retry-After` seconds." },
  CROSS_SITE_REQUEST: { status: 403, message: "Cross-site request refused", code: "cross_site_request", retry: false, meaning: "A console change sent from another site's page." },
  INVITATION_INVALID: { status: 404, message: "This invitation link is invalid, already used or expired", code: "invitation_invalid", retry: false, meaning: "The invitation is unknown, used or expired." },
  MEMBER_EXISTS: { status: 409, message: "This e-mail already has an account", code: "member_exists", retry: false, meaning: "The e-mail already has an account: sign in with it to accept the invitation." },
  ALREADY_MEMBER: { status: 409, message: "This e-mail is already a member of the team", code: "already_member", retry: false, meaning: "The person invited is a member of the team already." },
  INVITATION_OTHER_ACCOUNT: { status: 403, message: "This invitation is for another e-mail; sign in with that e-mail to accept it", code: "invitation_other_account", retry: false, meaning: "The signed-in account is not the one invited." },
  MEMBER_NOT_FOUND: { status: 404, message: "Member not found", code: "member_not_found", retry: false, meaning: "No such member in the team." },
  LAST_MEMBER: { status: 409, message: "A team keeps at least one member", code: "last_member", retry: false, meaning: "The last member of a team cannot be removed." },
  RESET_INVALID: { status: 404, message: "This reset link is invalid, already used or expired", code: "reset_invalid", retry: false, meaning: "The password reset link is unknown, used or expired: ask for another." },
  PASSWORD_INCORRECT: { status: 422, message: "The current password is wrong", code: "password_incorrect", retry: false, meaning: "Changing a password takes the current one." },
  OWNER_REQUIRED: { status: 403, message: "Only an owner of the team can do this", code: "owner_required", retry: false, meaning: "Members, roles and the team's settings are for its owners." },
  LAST_OWNER: { status: 409, message: "A team keeps at least one owner", code: "last_owner", retry: false, meaning: "The team's only owner cannot become a member." },
  SESSION_NOT_FOUND: { status: 404, message: "Session not found", code: "session_not_found", retry: false, meaning: "No session of this account with this id." },
  SECOND_FACTOR_INVALID: { status: 401, message: "Wrong code", code: "second_factor_invalid", retry: false, meaning: "The authenticator's code or the recovery code is not right (or was used already): each sign-in takes five tries." },
  CHALLENGE_INVALID: { status: 401, message: "This sign-in has expired: sign in again", code: "challenge_invalid", retry: false, meaning: "The sign-in waiting for its second factor is unknown, used, out of tries or older than five minutes." },
  TWO_FACTOR_NOT_PENDING: { status: 409, message: "Start the two-factor setup first", code: "two_factor_not_pending", retry: false, meaning: "There is no two-factor setup to confirm (or two-factor sign-in is off)." },
  MESSAGE_NOT_FOUND: { status: 404, message: "Message not found", code: "message_not_found", retry: false, meaning: "No message with this id in the store." },
  ENDPOINT_NOT_FOUND: { status: 404, message: "This store has no endpoint of its own", code: "endpoint_not_found", retry: false, meaning: "The store's messages go to the service's default: set an endpoint first." },
  ENDPOINT_INVALID: { status: 422, message: "The endpoint must be an http or https URL, without credentials, whose host name resolves", code: "endpoint_invalid", retry: false, meaning: "The endpoint's URL cannot be used: not http or https, user and password in it, or a host name that does not resolve." },
  ENDPOINT_ADDRESS_REFUSED: { status: 422, message: "Endpoints on loopback, private or link-local addresses are not allowed", code: "endpoint_address_refused", retry: false, meaning: "The endpoint's host is, or resolves to, a loopback, private or link-local address; the operator allows those with `WEBHOOK_ALLOW_PRIVATE_ADDRESSES`." },
} as const satisfies Record<string, { status: number; message: string; code: string; retry: boolean; meaning: string }>;

export type ErrorCode = keyof typeof ERRORS;

/** The stable codes error bodies carry, as sent (snake_case). */
export type ErrorWireCode = (typeof ERRORS)[ErrorCode]["code"];

/** The body of an error: its message and code, and the failing fields on a 422. */
export function errorBodyOf(code: ErrorCode, details?: ReadonlyArray<{ path: string; message: string }>): { error: string; code: ErrorWireCode; details?: Array<{ path: string; message: string }> } {
  const { message, code: wire } = ERRORS[code];
  return details ? { error: message, code: wire, details: [...details] } : { error: message, code: wire };
}
