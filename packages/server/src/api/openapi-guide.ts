import type { RateLimitOptions } from "../tenancy/access.js";

/** What the document's front page states of this deployment. */
export type GuideFacts = { rateLimit: RateLimitOptions | undefined; bodyLimitBytes: number };

/**
 * Where the service answers, as the front page's examples write it: the docs
 * page puts the address it was opened at in its place, so every example runs
 * as shown against the service that served it.
 */
export const SERVICE_ORIGIN = "https://ingest.your-company.example";

const kilobytes = (bytes: number) => `${Math.round(bytes / 1024).toLocaleString("en-US")} KB`;

/**
 * The front page of the API reference (the OpenAPI document's description,
 * which /docs shows above the operations): what an integrator needs before the
 * first request, with curl lines that run as printed once the three variables
 * are set.
 */
export function apiGuide(facts: GuideFacts): string {
  const rateLimit = facts.rateLimit
    ? `${facts.rateLimit.requests.toLocaleString("en-US")} requests per key per ${facts.rateLimit.windowSeconds} seconds`
    : "none on this deployment";
  return `Shops push orders, abandoned checkouts, customers and shipments; each push is stored per store and triggers messaging automations (post-purchase, checkout recovery, contact sync, shipping notifications) for the customer's messaging contact, matched by phone.

## First request

\`\`\`sh
export BASE_URL=${SERVICE_ORIGIN} STORE_ID=1 API_KEY=your-24-character-api-key   # a local service prints these at its first start (.data/demo.env)

curl -i -X POST "$BASE_URL/api/v1/stores/$STORE_ID/customers" \\
  -H "Authorization: Bearer $API_KEY" -H "Content-Type: application/json" \\
  -d '{"external_id": "c-1001", "phone": "(415) 555-2671", "first_name": "Ada"}'

curl -i "$BASE_URL/api/v1/stores/$STORE_ID/customers/c-1001" -H "Authorization: Bearer $API_KEY"
\`\`\`

The first push answers \`201\`, the same push again \`200\`; reading it back shows the phone as it was stored, \`+14155552671\`. In this page: **Authorize** with your key, open an operation, **Try it out** (each has a working example body), fill in \`store_id\`, **Execute**.

## Keys and stores

- Every request carries \`Authorization: Bearer <API_KEY>\`: a 24-character key, sent exactly as issued. It belongs to a team and authorizes the team's stores (or one store, when created for one). Keep it on your server.
- \`store_id\` in the path names the store. An unknown key is \`401\`; a store of another team \`403\`; an unknown or paused store \`404\`.
- Checks run in this order: key, rate limit, store, body, the resource's rules; a body over ${kilobytes(facts.bodyLimitBytes)} is refused \`413\` before anything else.

## Writes

- **Upserts** (\`POST\`) are keyed by \`external_id\` within the store (a customer without one by its E.164 phone): \`201\` when they created the record, \`200\` when they updated it. Pushing the same record again never duplicates it or its messages.
- **Merge rules**: a field sent replaces the stored value, a field left out keeps it, \`null\` clears it. \`tags\` and \`metadata\` are replaced whole, never merged.
- **Unknown fields** are ignored and named in the \`X-Ignored-Fields\` response header. Send \`Prefer: handling=strict\` to have them refused (\`422\`, one \`unknown field\` detail each, nothing written); read-only fields such as \`id\` or \`created_at\` count as unknown.
- **Read back** any record: \`GET /api/v1/stores/{store_id}/{orders|customers|checkouts|shipments}/{external_id}\`.

## Values

- **Money**: \`total_price\` is a JSON number in the currency's major unit (\`129.9\`), at most 999,999,999,999.99, stored and returned as a string with two decimals rounded half-up (\`"129.90"\`; \`19.999\` becomes \`"20.00"\`, and a 3-decimal currency loses its third decimal). \`lifetime_value\` is an integer in the minor unit (cents) of the shop's currency: \`125050\` is 1,250.50.
- **Phones**: any common format. A number without \`+\` is read in the store's default country (\`(415) 555-2671\` in a US store); all are stored in E.164. An invalid one is a \`422\` naming the field.
- **Times**: ISO 8601 with \`Z\` or a numeric offset (\`2026-11-20T14:03:00Z\`, \`2026-11-20T15:03:00+01:00\`); a time without a zone is ambiguous and refused. Responses use milliseconds and a numeric offset.
- **Currency**: a three-letter ISO 4217 code; **URLs**: http(s), at most 1,024 characters; **external ids**: 1 to 255 characters, any characters (URL-encode them in paths).

## Automations

- Order created: post-purchase, once per order. Checkout pushed (it is stored \`abandoned\`): a recovery message after the store's delay, cancelled when the checkout leaves \`abandoned\` or the customer orders. Customer created or changed: contact sync. Shipment created or its status changed: a shipping notification.
- **Backfill**: send \`X-Backfill: true\` with historical data. It is stored as usual and triggers nothing; the response says \`X-Backfill: true\`. Leave the header out for live pushes.
- **Out-of-order webhooks**: send \`source_updated_at\` (when your shop changed the record). A write older than the stored one is not applied: \`200\`, the stored record, \`X-Stale-Write: ignored\`.

## Retries, limits and errors

- **Rate limit**: ${rateLimit}; a batch costs one request per 250 records (a batch of 1,000 costs 4), and one over 1,000 records, or whose cost could never fit the limit, is a \`422\`, never a \`429\`. Every authenticated answer carries \`RateLimit-Limit\`, \`RateLimit-Remaining\` and \`RateLimit-Reset\` (seconds); past the limit, \`429\` with \`Retry-After\`.
- **Idempotency**: send \`Idempotency-Key\` (1 to 255 printable characters) on a \`POST\`, \`PATCH\` or \`DELETE\`, and a retry within 24 hours gets the first answer again (\`Idempotent-Replayed: true\`) instead of running twice. Upserts are safe to retry anyway; the key also keeps \`201\` right.
- **Request ids**: every answer carries \`X-Request-Id\` (yours when you send one); quote it when asking for help.
- **Errors** are \`{"error": "<message>", "code": "<code>"}\`: the message, as listed under each operation, is for people and may be reworded; the \`code\` (\`store_not_found\`, \`order_not_found\`, \`validation_failed\`, ...) never changes, and is what to branch on (the \`Error\` schema lists every code, whether a retry can help, and what it means). A \`422\` adds \`details\`, one \`{"path", "message"}\` per failing field (\`customer.phone\`). \`503\` with \`Retry-After\` means the database is briefly unreachable: retry.

## Webhooks

Messages can be delivered to your HTTPS endpoint as a signed JSON \`POST\` (see **Webhooks** at the bottom of this page for each flow's payload). \`X-Signature: t=<unix seconds>,v1=<hex>\` is HMAC-SHA256 with your secret over \`<t>.<raw body>\`; \`X-Message-Id\` is stable across retries, so drop repeats by it. The Node SDK's \`verifyWebhook\` checks both, and \`signWebhookForTest\` signs a test delivery.`;
}
