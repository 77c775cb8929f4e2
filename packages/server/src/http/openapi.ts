import { ERRORS, errorBodySchema, type ErrorCode } from "@commerce-ingest/shared";
import type { AnyRouter } from "@trpc/server";
import { generateOpenApiDocument, type OpenAPIObject } from "trpc-to-openapi";

type Operation = { responses?: Record<string, unknown>; requestBody?: unknown; security?: unknown; parameters?: Array<Record<string, unknown>> };

const requestIdHeader = {
  in: "header",
  name: "X-Request-Id",
  required: false,
  description: "Your id for this request (printable ASCII, at most 128 characters); echoed in the response and the logs. One is made when absent.",
  schema: { type: "string", maxLength: 128 },
};
const backfillHeader = {
  in: "header",
  name: "X-Backfill",
  required: false,
  description: "`true` for historical data: stored as usual, but no automation is triggered. Any value but `false` or `0` counts.",
  schema: { type: "string", example: "true" },
};
const requestIdResponseHeader = { "X-Request-Id": { description: "The request's id: yours, or a new one", schema: { type: "string" } } };

const errorRef = { $ref: "#/components/schemas/Error" };

function errorResponse(description: string, codes: ErrorCode[], headers?: Record<string, unknown>) {
  const examples = Object.fromEntries(codes.map((code) => [code, { value: { error: ERRORS[code].message } }]));
  return { description, ...(headers ? { headers } : {}), content: { "application/json": { schema: errorRef, examples } } };
}

const retryAfter = { "Retry-After": { description: "Seconds to wait before trying again", schema: { type: "integer" } } };

/**
 * The document trpc-to-openapi derives from the procedures, completed with what
 * only the contract knows: 201/200 on upserts, 204 on erasure, and every error
 * status with our `{ error, details? }` schema.
 */
export function buildOpenApiDocument(appRouter: AnyRouter): OpenAPIObject {
  const document = generateOpenApiDocument(appRouter, {
    title: "Commerce Data Ingestion API",
    description:
      "Shops push orders, abandoned checkouts, customers and shipments; each push is stored per store " +
      "and triggers messaging automations. Every request carries `Authorization: Bearer <API_KEY>`.",
    version: "1.0.0",
    baseUrl: "/",
    securitySchemes: {
      bearerAuth: { type: "http", scheme: "bearer", description: "A 24-character API key, sent exactly as issued." },
    },
    filter: ({ metadata }) => metadata.openapi.path.startsWith("/api/v1/"),
    defs: { Error: errorBodySchema },
  });

  for (const [path, item] of Object.entries(document.paths ?? {})) {
    for (const [method, operation] of Object.entries(item as Record<string, Operation>)) {
      const success = operation.responses?.["200"] as { content?: unknown } | undefined;
      const responses: Record<string, unknown> = {};
      const isUpsert = method === "post";
      if (method === "delete") {
        responses["204"] = { description: "Done; no body" };
      } else if (isUpsert) {
        responses["201"] = { description: "Created: the key was new (or the customer had been erased)", content: success?.content };
        responses["200"] = { description: "Updated: a record with this key existed", content: success?.content };
      } else {
        responses["200"] = { description: "Updated", content: success?.content };
      }
      if (operation.requestBody) {
        responses["400"] = errorResponse("The body is not valid JSON", ["MALFORMED_JSON"]);
      }
      responses["401"] = errorResponse("No key, or a key that is unknown or deleted", ["API_KEY_MISSING", "API_KEY_INVALID"]);
      responses["403"] = errorResponse("The key does not authorize this store", ["STORE_FORBIDDEN"]);
      const notFound: ErrorCode[] = ["STORE_NOT_FOUND"];
      if (path.endsWith("/orders/{external_id}")) notFound.push("ORDER_NOT_FOUND");
      if (path.endsWith("/checkouts/{external_id}")) notFound.push("CHECKOUT_NOT_FOUND");
      responses["404"] = errorResponse("The store (or the record) does not exist, or the store is paused", notFound);
      if (operation.requestBody) {
        responses["413"] = errorResponse("The body is over the size limit", ["BODY_TOO_LARGE"]);
        responses["415"] = errorResponse("The body is not sent as application/json", ["UNSUPPORTED_MEDIA_TYPE"]);
        responses["422"] = errorResponse("The body fails validation; `details` names each failing field", ["VALIDATION_FAILED"]);
      }
      responses["429"] = errorResponse("Too many requests for this key", ["RATE_LIMITED"], retryAfter);
      responses["500"] = errorResponse("Unexpected failure", ["INTERNAL"]);
      responses["503"] = errorResponse("The database is unreachable", ["SERVICE_UNAVAILABLE"], retryAfter);
      for (const response of Object.values(responses) as Array<{ headers?: Record<string, unknown> }>) {
        response.headers = { ...requestIdResponseHeader, ...response.headers };
      }
      operation.responses = responses;
      operation.security = [{ bearerAuth: [] }];
      operation.parameters = [
        ...(operation.parameters ?? []).map((parameter) =>
          parameter.name === "external_id" ? { ...parameter, description: "The record's external_id, percent-encoded (any character is allowed)" } : parameter,
        ),
        requestIdHeader,
        ...(method === "post" || method === "patch" ? [backfillHeader] : []),
      ];
    }
  }

  // The library's own error shapes are never what this API answers with.
  const schemas = document.components?.schemas ?? {};
  for (const name of Object.keys(schemas)) if (name.startsWith("error.")) delete schemas[name];
  return document;
}
