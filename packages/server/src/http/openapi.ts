import { ERRORS, errorBodySchema, webhookMessageSchema, type ErrorBody, type ErrorCode } from "@commerce-ingest/shared";
import type { AnyRouter } from "@trpc/server";
import { generateOpenApiDocument, type OpenAPIObject } from "trpc-to-openapi";
import { createSchema } from "zod-openapi";
import type { ProcedureContract } from "../trpc.js";
import { apiGuide, type GuideFacts } from "./openapi-guide.js";
import { listRestRoutes } from "./rest.js";

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
  description:
    "`true` for historical data: stored as usual, but no automation is triggered (the response says `X-Backfill: true`). Any value but `false` or `0` counts. Leave it out for live pushes.",
  // No example: Swagger UI would pre-fill it, and a push from "Try it out" would silently trigger nothing.
  schema: { type: "string" },
};
const preferHeader = {
  in: "header",
  name: "Prefer",
  required: false,
  description:
    "`handling=strict` (RFC 7240): a field the API does not know (a typo, a read-only field such as `id`) is a 422 naming it (`unknown field`) instead of being ignored. The response then says `Preference-Applied: handling=strict`.",
  schema: { type: "string" },
};
/** On the answers to a request with a body. */
const bodyResponseHeaders = {
  "X-Ignored-Fields": { description: "The body's fields the API does not know, ignored (dotted paths, comma-separated); absent when none", schema: { type: "string" } },
  "Preference-Applied": { description: "`handling=strict` when the request asked for strict handling", schema: { type: "string" } },
};
const requestIdResponseHeader = { "X-Request-Id": { description: "The request's id: yours, or a new one", schema: { type: "string" } } };
const retryAfter = { "Retry-After": { description: "Seconds to wait before trying again", schema: { type: "integer" } } };
/** On every answer to an authenticated request (when the service has a rate limit). */
const rateLimitHeaders = {
  "RateLimit-Limit": { description: "Requests this key may make per window", schema: { type: "integer" } },
  "RateLimit-Remaining": { description: "Requests left in the current window", schema: { type: "integer" } },
  "RateLimit-Reset": { description: "Seconds until the window resets", schema: { type: "integer" } },
};

/** What each error status means, and the headers it carries. */
const ERROR_STATUSES: Record<number, { description: string; headers?: Record<string, unknown> }> = {
  400: { description: "The body is not valid JSON" },
  401: { description: "No key, or a key that is unknown or deleted" },
  403: { description: "The key does not authorize this store" },
  404: { description: "The store (or the record) does not exist, or the store is paused" },
  413: { description: "The body is over the size limit" },
  415: { description: "The body is not sent as application/json" },
  422: { description: "The body fails validation or a rule of the resource; `details` names each failing field" },
  429: { description: "Too many requests for this key", headers: retryAfter },
  500: { description: "Unexpected failure" },
  503: { description: "The database is unreachable", headers: retryAfter },
};

/** Example bodies where the message alone would not show the shape. */
const EXAMPLE_BODIES: Partial<Record<ErrorCode, ErrorBody>> = {
  VALIDATION_FAILED: {
    error: ERRORS.VALIDATION_FAILED.message,
    details: [
      { path: "customer.phone", message: "is not a valid phone number" },
      { path: "placed_at", message: "Invalid ISO datetime" },
      { path: "financial_staus", message: "unknown field" },
    ],
  },
  SHIPMENT_ORDER_NOT_FOUND: {
    error: ERRORS.SHIPMENT_ORDER_NOT_FOUND.message,
    details: [{ path: "order_external_id", message: "no order of this store has this external_id" }],
  },
};

const errorRef = { $ref: "#/components/schemas/Error" };

/** One response per status the procedure declares, each error status with an example per code. */
function responsesOf(contract: ProcedureContract, success: { content?: unknown } | undefined): Record<string, unknown> {
  const responses: Record<string, { description: string; headers?: Record<string, unknown>; content?: unknown }> = {};
  for (const [status, description] of Object.entries(contract.success)) {
    responses[status] = status === "204" ? { description } : { description, content: success?.content };
  }
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of contract.errors) byStatus.set(ERRORS[code].status, [...(byStatus.get(ERRORS[code].status) ?? []), code]);
  for (const [status, codes] of [...byStatus].sort(([a], [b]) => a - b)) {
    const meaning = ERROR_STATUSES[status] ?? { description: "Error" };
    const examples = Object.fromEntries(codes.map((code) => [code, { value: EXAMPLE_BODIES[code] ?? { error: ERRORS[code].message } }]));
    responses[String(status)] = { ...meaning, content: { "application/json": { schema: errorRef, examples } } };
  }
  for (const [status, response] of Object.entries(responses)) {
    response.headers = { ...requestIdResponseHeader, ...(status === "401" ? {} : rateLimitHeaders), ...response.headers };
  }
  return responses;
}

/** The messaging webhook: what the service POSTs to MESSAGING_WEBHOOK_URL, one message per delivery. */
function webhooksSection(): Record<string, unknown> {
  const header = (description: string, example: string) => ({ in: "header", required: true, description, schema: { type: "string" }, example });
  return {
    message: {
      post: {
        summary: "A message to send, delivered to your endpoint",
        description:
          "One message per delivery, told apart by `flow`; `content` is the flow's payload. Answer any 2xx once it is handled: " +
          "anything else (or no answer within the timeout) is retried with backoff, with the same `id`.",
        parameters: [
          { name: "X-Signature", ...header("`t=<unix seconds>,v1=<hex>`: HMAC-SHA256 with your secret over `<t>.<raw body>`. Refuse a signature older than a few minutes.", "t=1795772400,v1=5257a8…") },
          { name: "X-Message-Id", ...header("The message's `id`, stable across retries: drop a repeat by it.", "3f1c2a9e-6b1d-4c53-9a55-0e7a1b2c3d4e") },
        ],
        requestBody: { required: true, content: { "application/json": { schema: createSchema(webhookMessageSchema, { io: "output" }).schema } } },
        responses: { "200": { description: "Handled (any 2xx)" } },
      },
    },
  };
}

/** The segment after `{store_id}`: the resource a REST path is about. */
const resourceOf = (path: string) => /\/stores\/\{store_id\}\/([a-z]+)/.exec(path)?.[1];

/**
 * The document trpc-to-openapi derives from the procedures (paths, parameters,
 * response schemas), completed from each procedure's declared contract: its
 * body and working example, its success statuses and every error it can
 * answer, with our `{ error, details? }` schema; a front page of what an
 * integrator needs first; and the messaging webhook's payloads.
 */
export function buildOpenApiDocument(appRouter: AnyRouter, facts: GuideFacts = { rateLimit: undefined, bodyLimitBytes: 1024 * 1024 }): OpenAPIObject {
  const document = generateOpenApiDocument(appRouter, {
    title: "Commerce Data Ingestion API",
    description: apiGuide(facts),
    version: "1.0.0",
    baseUrl: "/",
    securitySchemes: {
      bearerAuth: { type: "http", scheme: "bearer", description: "A 24-character API key, sent exactly as issued." },
    },
    filter: ({ metadata }) => metadata.openapi.path.startsWith("/api/v1/"),
    defs: { Error: errorBodySchema },
  });

  const routes = listRestRoutes(appRouter);
  // Each resource's example key: its upsert example's external_id, used by the operations on one record.
  const exampleIds = new Map<string, string>();
  for (const route of routes) {
    const id = (route.contract?.example as { external_id?: unknown } | undefined)?.external_id;
    const resource = resourceOf(route.path);
    if (route.method === "POST" && typeof id === "string" && resource) exampleIds.set(resource, id);
  }

  for (const route of routes) {
    const method = route.method.toLowerCase();
    const operation = (document.paths?.[route.path] as Record<string, Operation> | undefined)?.[method];
    if (!operation || !route.contract) continue;
    const { contract } = route;
    if (contract.body) {
      const json = { schema: createSchema(contract.body, { io: "input" }).schema, ...(contract.example ? { example: contract.example } : {}) };
      operation.requestBody = { required: true, content: { "application/json": json } };
    }
    const exampleId = exampleIds.get(resourceOf(route.path) ?? "");
    for (const parameter of operation.parameters ?? []) {
      if (parameter.name === "external_id" && exampleId) parameter.example = exampleId;
    }
    operation.responses = responsesOf(contract, operation.responses?.["200"] as { content?: unknown } | undefined);
    if (contract.body) {
      for (const response of Object.values(operation.responses) as Array<{ headers?: Record<string, unknown> }>) response.headers = { ...response.headers, ...bodyResponseHeaders };
    }
    operation.security = [{ bearerAuth: [] }];
    operation.parameters = [
      ...(operation.parameters ?? []),
      requestIdHeader,
      ...(method === "post" || method === "patch" ? [backfillHeader] : []),
      ...(contract.body ? [preferHeader] : []),
    ];
  }

  (document as { webhooks?: unknown }).webhooks = webhooksSection();

  // The library's own error shapes are never what this API answers with.
  const schemas = document.components?.schemas ?? {};
  for (const name of Object.keys(schemas)) if (name.startsWith("error.")) delete schemas[name];
  return document;
}
