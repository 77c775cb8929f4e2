import { Ajv2020 } from "ajv/dist/2020.js";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { onceAcrossDatabases, startTestServer, type TestServer } from "../../test/helpers.js";

/**
 * The served OpenAPI document is the contract, checked by generation: every
 * operation it lists is called with inputs generated from its own schemas
 * (valid ones, and invalid ones: wrong types, unknown stores and ids, no key,
 * a wrong key, bodies of any JSON), seeded and reproducible. Any answer whose
 * status the operation does not document, whose body breaks the schema the
 * document gives for that status, or any 5xx, fails the test, with the
 * request that got it.
 */
const SEED = Number(process.env.OPENAPI_WALK_SEED ?? 20261127);
/** Calls per operation. */
const RUNS = Number(process.env.OPENAPI_WALK_RUNS ?? 16);

type Schema = { [key: string]: unknown };
type Operation = { parameters?: Array<Schema & { name: string; in: string; schema?: Schema; required?: boolean }>; requestBody?: { content: Record<string, { schema?: Schema; example?: unknown }> }; responses: Record<string, { content?: Record<string, { schema?: Schema }> }> };
type Document = { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, Schema> } };

let server: TestServer;
let tenant: Awaited<ReturnType<TestServer["createTenant"]>>;
let document: Document;

beforeAll(async () => {
  server = await startTestServer();
  tenant = await server.createTenant();
  document = (await server.request("GET", "/api/v1/openapi.json")).body as Document;
});
afterAll(async () => {
  await server?.close();
});

/** An arbitrary of values that a schema of the document allows (its refs followed, its collections kept small). */
function valueOf(schema: Schema | undefined, depth = 0): fc.Arbitrary<unknown> {
  if (!schema || depth > 5) return fc.constant(null);
  if (typeof schema.$ref === "string") return valueOf(document.components.schemas[schema.$ref.split("/").at(-1) ?? ""], depth + 1);
  if ("const" in schema) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  for (const key of ["anyOf", "oneOf"] as const) if (Array.isArray(schema[key])) return fc.oneof(...(schema[key] as Schema[]).map((option) => valueOf(option, depth + 1)));
  if (Array.isArray(schema.allOf)) return valueOf((schema.allOf as Schema[])[0], depth + 1);
  const types = Array.isArray(schema.type) ? (schema.type as string[]) : typeof schema.type === "string" ? [schema.type] : [];
  if (types.length > 1) return fc.oneof(...types.map((type) => valueOf({ ...schema, type }, depth)));
  const min = (key: string, fallback: number) => (typeof schema[key] === "number" ? (schema[key]) : fallback);
  switch (types[0]) {
    case "null":
      return fc.constant(null);
    case "boolean":
      return fc.boolean();
    case "integer":
      return fc.integer({ min: Math.max(min("minimum", -1000), -1_000_000), max: Math.min(min("maximum", 1_000_000), 1_000_000) });
    case "number":
      return fc.double({ min: Math.max(min("minimum", -1000), -1_000_000), max: Math.min(min("maximum", 1_000_000), 1_000_000), noNaN: true, noDefaultInfinity: true });
    case "string":
      if (schema.format === "date-time") return fc.date({ min: new Date("2000-01-01"), max: new Date("2030-01-01"), noInvalidDate: true }).map((date) => date.toISOString());
      return fc.string({ minLength: min("minLength", 0), maxLength: Math.min(min("maxLength", 24), 24) });
    case "array":
      return fc.array(valueOf(schema.items as Schema, depth + 1), { minLength: min("minItems", 0), maxLength: Math.min(min("maxItems", 3), 3) });
    case "object": {
      const properties = (schema.properties ?? {}) as Record<string, Schema>;
      const required = new Set((schema.required ?? []) as string[]);
      return fc.record(Object.fromEntries(Object.entries(properties).map(([name, property]) => [name, valueOf(property, depth + 1)])), { requiredKeys: [...required].filter((name) => name in properties) });
    }
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

/** A value of the schema, or (a quarter of the time) any JSON at all. */
const inputOf = (schema: Schema | undefined) => fc.oneof({ weight: 3, arbitrary: valueOf(schema) }, { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) });

type Call = { method: string; path: string; headers: Record<string, string>; body?: string };

/** An example body with its records' own `external_id`s made new (a batch's items too), so that it creates. */
function withNewKeys(example: unknown, id: string): unknown {
  if (Array.isArray(example)) return example.map((item, index) => withNewKeys(item, `${id}-${index}`));
  if (typeof example !== "object" || example === null) return example;
  const copy: Record<string, unknown> = { ...(example as Record<string, unknown>) };
  if (typeof copy.external_id === "string") copy.external_id = `${copy.external_id}-${id}`;
  if (Array.isArray(copy.items)) copy.items = withNewKeys(copy.items, id);
  return copy;
}

/** A call of the operation: its path's parameters (the tenant's store mostly), its query, its headers, its body. */
function callOf(path: string, method: string, operation: Operation): fc.Arbitrary<Call> {
  const parameters = operation.parameters ?? [];
  const pathValue = (name: string, schema: Schema | undefined) =>
    name === "store_id"
      ? fc.oneof({ weight: 6, arbitrary: fc.constant(String(tenant.store.id)) }, { weight: 1, arbitrary: fc.oneof(fc.integer({ min: -5, max: 10_000_000 }).map(String), fc.string({ minLength: 1, maxLength: 12 })) })
      : // A path's parameter is never empty: an empty one would be another path (the list's, with a trailing slash).
        fc.oneof(valueOf(schema).map(String), fc.string({ minLength: 1, maxLength: 16 }), fc.constantFrom("0", "abc", "9007199254740993", "c-1", "%2F")).filter((value) => value !== "");
  const pathParts = fc.record(Object.fromEntries(parameters.filter((p) => p.in === "path").map((p) => [p.name, pathValue(p.name, p.schema)])));
  const query = fc.record(Object.fromEntries(parameters.filter((p) => p.in === "query").map((p) => [p.name, fc.option(inputOf(p.schema), { nil: undefined, freq: p.required ? 8 : 2 })])));
  const key = fc.oneof({ weight: 8, arbitrary: fc.constant(`Bearer ${tenant.key}`) }, { weight: 1, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.constantFrom("Bearer nope", "Basic abc", `Bearer ${"x".repeat(24)}`) });
  const idempotencyKey = fc.option(fc.oneof(fc.string({ minLength: 1, maxLength: 40 }), fc.uuid()), { nil: undefined, freq: 3 });
  const [mediaType, content] = Object.entries(operation.requestBody?.content ?? {})[0] ?? [];
  const body: fc.Arbitrary<string | undefined> =
    mediaType === undefined
      ? fc.constant(undefined)
      : mediaType === "application/json"
        ? fc.oneof(
            // The document's own example, under a new key: what the service must take (201 or 200).
            { weight: content?.example ? 4 : 0, arbitrary: fc.string({ minLength: 1, maxLength: 12 }).map((id) => JSON.stringify(withNewKeys(content?.example, id))) },
            { weight: 4, arbitrary: inputOf(content?.schema).map((value) => JSON.stringify(value)) },
            { weight: 1, arbitrary: fc.constantFrom("{", "", "[1,2]", "null") },
          )
        : fc.array(fc.oneof(valueOf(document.components.schemas.CustomerInput).map((value) => JSON.stringify(value)), fc.jsonValue({ maxDepth: 2 }).map((value) => JSON.stringify(value)), fc.constant("")), { minLength: 0, maxLength: 4 }).map((lines) => lines.join("\n"));
  return fc.record({ pathParts, query, key, idempotencyKey, body }).map(({ pathParts, query, key, idempotencyKey, body }) => {
    const filled = path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(String(pathParts[name])));
    const pairs = Object.entries(query).flatMap(([name, value]): Array<[string, string]> => (value === undefined ? [] : [[name, typeof value === "string" ? value : JSON.stringify(value)]]));
    const search = new URLSearchParams(pairs).toString();
    const headers: Record<string, string> = {
      ...(key ? { Authorization: key } : {}),
      ...(idempotencyKey && method !== "get" ? { "Idempotency-Key": idempotencyKey } : {}),
      ...(mediaType ? { "Content-Type": mediaType } : {}),
    };
    return { method: method.toUpperCase(), path: `${filled}${search ? `?${search}` : ""}`, headers, ...(body === undefined ? {} : { body }) };
  });
}

describe.runIf(onceAcrossDatabases)("the served OpenAPI document, walked by generated requests", () => {
  it("documents every status each operation answers, every body matches its schema, and nothing answers 5xx", { timeout: 600_000 }, async () => {
    const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: false });
    ajv.addSchema({ $id: "doc", components: document.components }, "doc");
    const schemaAt = (schema: Schema) => ajv.compile(JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"doc#/components/')) as Schema);
    let requests = 0;
    const statuses = new Map<number, number>();
    const operations = Object.entries(document.paths).flatMap(([path, methods]) => Object.entries(methods).map(([method, operation]) => ({ path, method, operation })));
    for (const [index, { path, method, operation }] of operations.entries()) {
      await fc.assert(
        fc.asyncProperty(callOf(path, method, operation), async (call) => {
          requests++;
          const res = await fetch(server.url + call.path, { method: call.method, headers: call.headers, ...(call.body === undefined ? {} : { body: call.body }) });
          const text = await res.text();
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
          const where = `${call.method} ${call.path} -> ${res.status} ${text.slice(0, 300)}`;
          expect(res.status, where).toBeLessThan(500);
          const documented = operation.responses[String(res.status)];
          expect(documented, `undocumented status: ${where}`).toBeDefined();
          const [mediaType, content] = Object.entries(documented?.content ?? {})[0] ?? [];
          if (!content?.schema || res.status === 204) return;
          const validate = schemaAt(mediaType === "application/x-ndjson" ? ((content.schema).items as Schema) ?? content.schema : content.schema);
          const values = mediaType === "application/x-ndjson" ? text.split("\n").filter(Boolean).map((line) => JSON.parse(line) as unknown) : [JSON.parse(text) as unknown];
          for (const value of values) expect(validate(value), `${where}\n${JSON.stringify(validate.errors)}`).toBe(true);
        }),
        { seed: SEED + index, numRuns: RUNS, endOnFailure: true },
      );
    }
    const answered = [...statuses].sort(([a], [b]) => a - b).map(([status, count]) => `${status}: ${count}`).join(", ");
    console.log(`OpenAPI walk: ${requests} requests over ${operations.length} operations, seed ${SEED} (${answered})`);
    expect(requests).toBe(operations.length * RUNS);
  });
});
