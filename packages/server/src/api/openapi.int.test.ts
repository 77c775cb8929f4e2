import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../../test/helpers.js";

let server: TestServer;
type Schema = { type?: string | string[]; description?: string; properties?: Record<string, Schema>; items?: Schema; anyOf?: Schema[]; oneOf?: Schema[]; allOf?: Schema[]; $ref?: string };
type Operation = {
  parameters?: Array<{ name: string; in: string; required?: boolean; example?: unknown }>;
  requestBody?: { content: { "application/json"?: { schema: Schema; example?: unknown }; "application/x-ndjson"?: { schema: Schema; example?: unknown } } };
  responses: Record<string, { content?: { "application/json"?: { schema?: Schema } } }>;
};
type Document = {
  info: { description: string };
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
  webhooks: { message: { post: { requestBody: { content: { "application/json": { schema: Schema } } } } } };
};
let document: Document;

beforeAll(async () => {
  server = await startTestServer();
  document = (await server.request("GET", "/api/v1/openapi.json")).body as Document;
});
afterAll(() => server?.close());

/** Every operation of the document, as [method, path, operation]. */
const operations = () => Object.entries(document.paths).flatMap(([path, item]) => Object.entries(item).map(([method, operation]) => [method.toUpperCase(), path, operation] as const));

/** Dotted paths of the properties that have no description, at any depth (through arrays and unions). */
function undescribed(schema: Schema | undefined, at: string): string[] {
  if (!schema) return [];
  const inner = [...(schema.anyOf ?? []), ...(schema.oneOf ?? []), ...(schema.allOf ?? [])].flatMap((option) => undescribed(option, at));
  const items = undescribed(schema.items, `${at}[]`);
  const properties = Object.entries(schema.properties ?? {}).flatMap(([name, property]) => {
    const path = `${at}.${name}`;
    const described = property.description || property.$ref || (property.anyOf ?? property.oneOf ?? []).some((option) => option.description || option.$ref);
    return [...(described ? [] : [path]), ...undescribed(property, path)];
  });
  return [...inner, ...items, ...properties];
}

describe("the OpenAPI document explains itself", () => {
  it("describes every field of every request, response and webhook", () => {
    const missing = [
      ...operations().flatMap(([method, path, operation]) => [
        ...undescribed(operation.requestBody?.content["application/json"]?.schema, `${method} ${path} body`),
        ...Object.entries(operation.responses).flatMap(([status, response]) => undescribed(response.content?.["application/json"]?.schema, `${method} ${path} ${status}`)),
      ]),
      ...Object.entries(document.components.schemas).flatMap(([name, schema]) => undescribed(schema, name)),
      ...undescribed(document.webhooks.message.post.requestBody.content["application/json"].schema, "webhook"),
    ];
    expect(missing).toEqual([]);
  });

  it("has a front page with the rules an integrator needs first, and runnable curl lines", () => {
    const guide = document.info.description;
    for (const topic of ["Authorization: Bearer", "store_id", "`201`", "`null` clears", "minor unit (cents)", "half-up", "store's default country", "RateLimit-Remaining", "X-Backfill: true", "Idempotency-Key", "X-Request-Id", "X-Signature", "handling=strict"]) {
      expect(guide).toContain(topic);
    }
    expect(guide).toMatch(/curl -i -X POST "\$BASE_URL\/api\/v1\/stores\/\$STORE_ID\/customers"/);
  });

  it("publishes the messaging webhook's payload, one variant per flow", () => {
    const schema = document.webhooks.message.post.requestBody.content["application/json"].schema;
    const variants = schema.oneOf ?? schema.anyOf ?? [];
    expect(variants.map((variant) => (variant.properties?.flow as { const?: string } | undefined)?.const).sort()).toEqual(["checkout_recovery", "contact_sync", "post_purchase", "shipping_notification"]);
  });

  it("has a working example for every operation: each, sent as documented to a US store, answers 2xx", async () => {
    const tenant = await server.createTenant({ country: "US" });
    const rank = { POST: 0, PATCH: 1, GET: 2, DELETE: 3 } as Record<string, number>;
    const ordered = operations().sort(([a, pathA], [b, pathB]) => (rank[a] ?? 9) - (rank[b] ?? 9) || pathA.localeCompare(pathB));
    const results: string[] = [];
    const answers = new Map<string, unknown>();
    for (const [method, template, operation] of ordered) {
      const json = operation.requestBody?.content["application/json"]?.example;
      // An import's file, sent as the document shows it.
      const file = operation.requestBody?.content["application/x-ndjson"]?.example as string | undefined;
      if (operation.requestBody) expect(json ?? file, `${method} ${template} has an example body`).toBeDefined();
      let path = template.replace("{store_id}", String(tenant.store.id));
      for (const parameter of operation.parameters ?? []) {
        if (parameter.name === "store_id") continue;
        // An import is named by the id its upload answered.
        const example = parameter.name === "import_id" ? String((answers.get("POST /api/v1/stores/{store_id}/imports") as { id: number }).id) : parameter.example;
        if (parameter.in === "query" && parameter.required) path += `${path.includes("?") ? "&" : "?"}${parameter.name}=${encodeURIComponent(String(example))}`;
        if (parameter.in !== "path") continue;
        expect(example, `${method} ${template}: ${parameter.name} has an example`).toEqual(expect.any(String));
        path = path.replace(`{${parameter.name}}`, encodeURIComponent(String(example)));
      }
      const body = file !== undefined ? { rawBody: file, contentType: "application/x-ndjson" } : json === undefined ? {} : { body: json };
      const res = await server.request(method, path, { key: tenant.key, ...body, headers: { Prefer: "handling=strict" } });
      results.push(`${method} ${template} ${res.status < 300 ? "2xx" : `${res.status} ${JSON.stringify(res.body)}`}`);
      answers.set(`${method} ${template}`, res.body);
    }
    expect(results.every((line) => line.endsWith("2xx")), results.join("\n")).toBe(true);
    expect(results).toHaveLength(24);
    // The national-form phone of the customer example was read in the store's country.
    expect(answers.get("GET /api/v1/stores/{store_id}/customers/{external_id}")).toMatchObject({ external_id: "c-1001", phone: "+14155552671" });
    expect(answers.get("GET /api/v1/stores/{store_id}/shipments/{external_id}")).toMatchObject({ order_external_id: "1001", status: "in_transit" });
  });

  it("documents Idempotency-Key on every POST, PATCH and DELETE, with the 409 and 422 it can answer", () => {
    // An import's upload is a stream, which no key can stand for (its 202 names the import: poll that instead of sending again).
    const writes = operations().filter(([method, , operation]) => ["POST", "PATCH", "DELETE"].includes(method) && !operation.requestBody?.content["application/x-ndjson"]);
    expect(writes.length).toBeGreaterThan(0);
    for (const [method, path, operation] of writes) {
      const where = `${method} ${path}`;
      expect(operation.parameters, where).toContainEqual({ $ref: "#/components/parameters/IdempotencyKey" });
      const examples = (status: string) => Object.keys((operation.responses[status]?.content?.["application/json"] as { examples?: object } | undefined)?.examples ?? {});
      expect(examples("409"), where).toContain("request_in_progress");
      expect(examples("422"), where).toContain("idempotency_key_reused");
    }
    const reads = operations().filter(([method]) => method === "GET");
    for (const [, , operation] of reads) expect(operation.parameters).not.toContainEqual({ $ref: "#/components/parameters/IdempotencyKey" });
    expect((document as unknown as { components: { parameters: Record<string, { name: string }> } }).components.parameters.IdempotencyKey?.name).toBe("Idempotency-Key");
  });

  it("describes each response header once, and refers to it from the answers that carry it", () => {
    const components = (document as unknown as { components: { headers: Record<string, { description: string }> } }).components.headers;
    expect(Object.keys(components)).toEqual(expect.arrayContaining(["X-Request-Id", "RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset", "Retry-After", "X-Ignored-Fields", "Preference-Applied", "Idempotent-Replayed"]));
    const inline = operations().flatMap(([method, path, operation]) =>
      Object.entries(operation.responses).flatMap(([status, response]) =>
        Object.entries((response as { headers?: Record<string, { $ref?: string }> }).headers ?? {}).flatMap(([name, header]) => (header.$ref ? [] : [`${method} ${path} ${status} ${name}`])),
      ),
    );
    expect(inline).toEqual([]);
  });

  it("declares its tags, with what each holds, and says whose it is", () => {
    const { tags, info } = document as unknown as { tags: Array<{ name: string; description: string }>; info: { license?: { name: string }; contact?: object } };
    const used = new Set(operations().flatMap(([, , operation]) => (operation as { tags?: string[] }).tags ?? []));
    expect([...used].sort()).toEqual(tags.map((tag) => tag.name).sort());
    expect(tags.every((tag) => tag.description.length > 0)).toBe(true);
    expect(info.license?.name).toBe("MIT");
    expect(info.contact).toBeDefined();
  });
});
