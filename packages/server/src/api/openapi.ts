import { ERRORS, errorBodyOf, errorBodySchema, webhookMessageSchema, type ErrorBody, type ErrorCode } from "@commerce-ingest/shared";
import type { AnyRouter } from "@trpc/server";
import { generateOpenApiDocument, type OpenAPIObject } from "trpc-to-openapi";
import { createSchema } from "zod-openapi";
import type { ProcedureContract } from "../trpc.js";
import { apiGuide, type GuideFacts } from "./openapi-guide.js";
import { listRestRoutes } from "./rest.js";

type Operation = { responses?: Record<string, unknown>; requestBody?: unknown; security?: unknown; parameters?: Array<Record<string, unknown>> };

/** The request headers operations take, each described once (`components.parameters`) and referred to. */
const PARAMETERS = {
  RequestId: {
    in: "header",
    name: "X-Request-Id",
    required: false,
    description: "Your id for this request (printable ASCII, at most 128 characters); echoed in the response and the logs. One is made when absent.",
    schema: { type: "string", maxLength: 128 },
  },
  Backfill: {
    in: "header",
    name: "X-Backfill",
    required: false,
    description:
      "`true` for historical data: stored as usual, but no automation is triggered (the response says `X-Backfill: true`). Any value but `false` or `0` counts. Leave it out for live pushes.",
    // No example: Swagger UI would pre-fill it, and a push from "Try it out" would silently trigger nothing.
    schema: { type: "string" },
  },
  Prefer: {
    in: "header",
    name: "Prefer",
    required: false,
    description:
      "`handling=strict` (RFC 7240): a field the API does not know (a typo, a read-only field such as `id`) is a 422 naming it (`unknown field`) instead of being ignored. The response then says `Preference-Applied: handling=strict`.",
    schema: { type: "string" },
  },
  IdempotencyKey: {
    in: "header",
    name: "Idempotency-Key",
    required: false,
    description:
      "1 to 255 printable ASCII characters without spaces (`!` to `~`) of your choice, new for each distinct request; any other is `422 validation_failed`. A retry with the same key within 24 hours answers the first response again (status, body and `X-Request-Id`, with `Idempotent-Replayed: true`) instead of running twice; the same key with another request is `422 idempotency_key_reused`; a retry while the first still runs is `409 request_in_progress` with `Retry-After`. A 5xx is not kept: its retry runs again.",
    schema: { type: "string", minLength: 1, maxLength: 255, pattern: "^[\\x21-\\x7E]{1,255}$" },
  },
} as const;
const parameterRef = (name: keyof typeof PARAMETERS) => ({ $ref: `#/components/parameters/${name}` });

/** The response headers, each described once (`components.headers`) and referred to where an answer carries it. */
const HEADERS = {
  "X-Request-Id": { description: "The request's id: yours, or a new one. Every answer carries it.", schema: { type: "string" } },
  "RateLimit-Limit": { description: "Requests this key may make per window (on every authenticated answer, when the service has a rate limit)", schema: { type: "integer" } },
  "RateLimit-Remaining": { description: "Requests left in the current window", schema: { type: "integer" } },
  "RateLimit-Reset": { description: "Seconds until the window resets", schema: { type: "integer" } },
  "Retry-After": { description: "Seconds to wait before trying again", schema: { type: "integer" } },
  "X-Ignored-Fields": { description: "The body's fields the API does not know, ignored (dotted paths, comma-separated); absent when none", schema: { type: "string" } },
  "Preference-Applied": { description: "`handling=strict` when the request asked for strict handling", schema: { type: "string" } },
  Location: { description: "The URL of what the request created", schema: { type: "string" } },
  "Idempotent-Replayed": { description: "`true` when this is the first answer to an earlier request with the same `Idempotency-Key`, replayed", schema: { type: "string" } },
} as const;
const headerRefs = (...names: Array<keyof typeof HEADERS>) => Object.fromEntries(names.map((name) => [name, { $ref: `#/components/headers/${name}` }]));
const retryAfter = headerRefs("Retry-After");
/** A success's headers: its id and the rate limit, on every one. */
const successHeaders = headerRefs("X-Request-Id", "RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset");

/** The operations' tags, declared with what each holds. */
const TAGS = [
  { name: "orders", description: "Orders: upsert, PATCH, read back, batches. A new order triggers its post-purchase message." },
  { name: "customers", description: "Customers: upsert, erase (privacy), read back, batches. A change syncs the customer's messaging contact." },
  { name: "checkouts", description: "Abandoned checkouts: upsert, PATCH, read back, batches. An abandoned checkout schedules its recovery message." },
  { name: "shipments", description: "Shipments: upsert (linked to their order), read back, batches. A new status sends a shipping notification." },
  { name: "imports", description: "Imports: a shop's history as one NDJSON file (gzipped or not) of orders, customers, checkouts or shipments, stored as backfill pushes would be, without automations." },
];

/** What each error status means, and the headers it carries. */
const ERROR_STATUSES: Record<number, { description: string; headers?: Record<string, unknown> }> = {
  400: { description: "The body is not valid JSON" },
  401: { description: "No key, or a key that is unknown or deleted" },
  403: { description: "The key does not authorize this store" },
  404: { description: "The store (or the record) does not exist, or the store is paused" },
  413: { description: "The body (or an import's file) is over its size limit" },
  415: { description: "The body is not sent in the media type the operation takes" },
  422: { description: "The body fails validation or a rule of the resource; `details` names each failing field" },
  409: { description: "A request with this `Idempotency-Key` is still running (or the import has already ended)", headers: retryAfter },
  429: { description: "Too many requests for this key", headers: retryAfter },
  500: { description: "Unexpected failure" },
  503: { description: "The database is unreachable", headers: retryAfter },
};

/** Example bodies where the message alone would not show the shape. */
const EXAMPLE_BODIES: Partial<Record<ErrorCode, ErrorBody>> = {
  VALIDATION_FAILED: errorBodyOf("VALIDATION_FAILED", [
    { path: "customer.phone", message: "is not a valid phone number" },
    { path: "placed_at", message: "Invalid ISO datetime" },
    { path: "financial_staus", message: "unknown field" },
  ]),
  SHIPMENT_ORDER_NOT_FOUND: errorBodyOf("SHIPMENT_ORDER_NOT_FOUND", [{ path: "order_external_id", message: "no order of this store has this external_id" }]),
};

const errorRef = { $ref: "#/components/schemas/Error" };

/**
 * One response per status the procedure declares, each error status with an
 * example per code. A success lists the headers it carries; an error only
 * those particular to it (`Retry-After`): its `X-Request-Id` and rate limit
 * headers are those of every answer, described once on the front page.
 */
function responsesOf(contract: ProcedureContract, success: { content?: unknown } | undefined, extra: { errors: readonly ErrorCode[]; headers: Record<string, unknown> }): Record<string, unknown> {
  const responses: Record<string, { description: string; headers?: Record<string, unknown>; content?: unknown }> = {};
  for (const [status, description] of Object.entries(contract.success)) {
    const headers = { ...successHeaders, ...extra.headers };
    responses[status] = status === "204" ? { description, headers } : { description, headers, content: success?.content };
  }
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of new Set([...contract.errors, ...extra.errors])) byStatus.set(ERRORS[code].status, [...(byStatus.get(ERRORS[code].status) ?? []), code]);
  for (const [status, codes] of [...byStatus].sort(([a], [b]) => a - b)) {
    const meaning = ERROR_STATUSES[status] ?? { description: "Error" };
    const examples = Object.fromEntries(codes.map((code) => [ERRORS[code].code, { summary: ERRORS[code].meaning, value: EXAMPLE_BODIES[code] ?? errorBodyOf(code) }]));
    responses[String(status)] = { ...meaning, content: { "application/json": { schema: errorRef, examples } } };
  }
  return responses;
}

/** The messaging webhook: what the service POSTs to MESSAGING_WEBHOOK_URL, one message per delivery. */
function webhooksSection(): Record<string, unknown> {
  const header = (description: string, example: string) => ({ in: "header", required: true, description, schema: { type: "string" }, example });
  return {
    message: {
      post: {
        operationId: "receiveMessage",
        summary: "A message to send, delivered to your endpoint",
        description:
          "One message per delivery, told apart by `flow`; `content` is the flow's payload. Answer any 2xx once it is handled: " +
          "anything else (or no answer within the timeout) is retried with backoff, with the same `id`.",
        parameters: [
          { name: "X-Signature", ...header("`t=<unix seconds>,v1=<hex>`: HMAC-SHA256 with your secret over `<t>.<raw body>`. Refuse a signature older than a few minutes.", "t=1795772400,v1=5257a8…") },
          { name: "X-Message-Id", ...header("The message's `id`, stable across retries: drop a repeat by it.", "3f1c2a9e-6b1d-4c53-9a55-0e7a1b2c3d4e") },
        ],
        requestBody: { required: true, content: { "application/json": { schema: createSchema(webhookMessageSchema, { io: "output" }).schema } } },
        // Authenticated by its signature (`X-Signature`), not by a key of this API.
        security: [],
        responses: {
          "200": { description: "Handled: any 2xx answer ends the delivery" },
          default: { description: "Not handled: any other answer, or none within the timeout, is retried with backoff, with the same `id`, until it ends failed" },
        },
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
    if (contract.upload) {
      // The file is the body; what the procedure reads besides comes in the query.
      const query = Object.entries((createSchema(contract.upload.query, { io: "input" }).schema as { properties?: Record<string, { description?: string; example?: unknown }> }).properties ?? {})
        .filter(([name]) => !operation.parameters?.some((parameter) => parameter.name === name))
        .map(([name, schema]) => ({ in: "query", name, required: true, description: schema.description, schema, ...(schema.example !== undefined ? { example: schema.example } : {}) }));
      operation.parameters = [...(operation.parameters ?? []), ...query];
      operation.requestBody = {
        required: true,
        description: contract.upload.description,
        content: { [contract.upload.mediaType]: { schema: { type: "string", format: "binary" }, ...(contract.upload.example ? { example: contract.upload.example } : {}) } },
      };
    }
    const exampleId = exampleIds.get(resourceOf(route.path) ?? "");
    for (const parameter of operation.parameters ?? []) {
      if (parameter.name === "external_id" && exampleId) parameter.example = exampleId;
    }
    // Every write takes an Idempotency-Key (see `runOnce` in `records/procedures.ts`), and can then answer its 409 and 422.
    const idempotent = (method === "post" || method === "patch" || method === "delete") && !contract.upload;
    const streamed = contract.stream && createSchema(contract.stream.item, { io: "output" });
    if (streamed) Object.assign((document.components ??= {}).schemas ??= {}, streamed.components);
    const success = contract.stream && streamed
      ? { content: { [contract.stream.mediaType]: { schema: streamed.schema } } }
      : ((operation.responses?.["200"] ?? operation.responses?.["202"]) as { content?: unknown } | undefined);
    operation.responses = responsesOf(contract, success, {
      errors: idempotent ? ["REQUEST_IN_PROGRESS", "IDEMPOTENCY_KEY_REUSED"] : [],
      headers: {
        ...(contract.body ? headerRefs("X-Ignored-Fields", "Preference-Applied") : {}),
        ...(idempotent && !contract.upload ? headerRefs("Idempotent-Replayed") : {}),
        ...(contract.upload ? headerRefs("Location") : {}),
      },
    });
    operation.security = [{ bearerAuth: [] }];
    operation.parameters = [
      ...(operation.parameters ?? []),
      parameterRef("RequestId"),
      ...(idempotent ? [parameterRef("IdempotencyKey")] : []),
      ...((method === "post" || method === "patch") && !contract.upload ? [parameterRef("Backfill")] : []),
      ...(contract.body ? [parameterRef("Prefer")] : []),
    ];
  }

  (document as { webhooks?: unknown }).webhooks = webhooksSection();
  const components = (document.components ??= {});
  components.parameters = { ...components.parameters, ...PARAMETERS };
  components.headers = { ...components.headers, ...HEADERS };
  document.tags = TAGS;
  document.info.contact = { name: "Commerce Data Ingestion API" };
  document.info.license = { name: "MIT", identifier: "MIT" };

  // The library's own error shapes are never what this API answers with.
  const schemas = document.components?.schemas ?? {};
  for (const name of Object.keys(schemas)) if (name.startsWith("error.")) delete schemas[name];
  return document;
}
