/**
 * Every error the service answers with, on the REST API and the operator API:
 * the HTTP status and the exact message of the contract. The server's single
 * error type carries one of these codes and is answered through this table; the
 * OpenAPI document's error examples are built from it too.
 */
export const ERRORS = {
  API_KEY_MISSING: { status: 401, message: "API key is missing" },
  API_KEY_INVALID: { status: 401, message: "Invalid API key" },
  STORE_FORBIDDEN: { status: 403, message: "API key does not authorize this store" },
  STORE_NOT_FOUND: { status: 404, message: "Store not found or paused" },
  ORDER_NOT_FOUND: { status: 404, message: "Order not found" },
  CHECKOUT_NOT_FOUND: { status: 404, message: "Checkout not found" },
  CUSTOMER_NOT_FOUND: { status: 404, message: "Customer not found" },
  SHIPMENT_NOT_FOUND: { status: 404, message: "Shipment not found" },
  SHIPMENT_ORDER_NOT_FOUND: { status: 422, message: "Order not found" },
  MALFORMED_JSON: { status: 400, message: "Malformed JSON body" },
  MALFORMED_REQUEST: { status: 400, message: "Malformed HTTP request" },
  HEADERS_TOO_LARGE: { status: 431, message: "Request headers too large" },
  REQUEST_TIMEOUT: { status: 408, message: "Request timeout" },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, message: "Content-Type must be application/json" },
  BODY_TOO_LARGE: { status: 413, message: "Request body too large" },
  VALIDATION_FAILED: { status: 422, message: "Invalid request body" },
  RATE_LIMITED: { status: 429, message: "Rate limit exceeded" },
  IDEMPOTENCY_KEY_REUSED: { status: 422, message: "Idempotency-Key reused with a different request" },
  REQUEST_IN_PROGRESS: { status: 409, message: "Request in progress" },
  NOT_FOUND: { status: 404, message: "Not found" },
  METHOD_NOT_ALLOWED: { status: 405, message: "Method not allowed" },
  SERVICE_UNAVAILABLE: { status: 503, message: "Service unavailable" },
  INTERNAL: { status: 500, message: "Internal server error" },
  ADMIN_TOKEN_MISSING: { status: 401, message: "Admin token is missing" },
  ADMIN_TOKEN_INVALID: { status: 401, message: "Invalid admin token" },
  TEAM_NOT_FOUND: { status: 404, message: "Team not found" },
  ADMIN_STORE_NOT_FOUND: { status: 404, message: "Store not found" },
  KEY_NOT_FOUND: { status: 404, message: "API key not found" },
  SIGN_IN_REQUIRED: { status: 401, message: "Sign in first" },
  SIGN_IN_FAILED: { status: 401, message: "Wrong e-mail or password" },
  SIGN_IN_THROTTLED: { status: 429, message: "Too many sign-in attempts; try again later" },
  CROSS_SITE_REQUEST: { status: 403, message: "Cross-site request refused" },
  INVITATION_INVALID: { status: 404, message: "This invitation link is invalid, already used or expired" },
  MEMBER_EXISTS: { status: 409, message: "This e-mail already has an account" },
  MEMBER_NOT_FOUND: { status: 404, message: "Member not found" },
  LAST_MEMBER: { status: 409, message: "A team keeps at least one member" },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof ERRORS;
