/** The prose of the two OpenAPI documents (openapi-documents.ts); docs/interface.md says the same at length. */

export const merchantDescription = `
Connects merchants to the game platform: cancel free-bet rewards (queued, applied in batches by
workers), read reward configurations, and validate a game session token with its bet slip. The
admin API, the queue dashboard and the metrics answer on the deployment's admin port (ADMIN_PORT),
described by a document of their own (openapi/admin.json, served at \`/openapi.json\` there). Guides: docs/interface.md (the routes),
the limits and the retry rules (docs/interface.md, "Limits" and "Retrying").

## Merchant signature (in the body: \`security: []\`, extension \`x-body-signature\`)

Every request carries \`merchantId\`, \`timestamp\` and \`hash\` in its JSON body (query parameters for
\`GET /betSlip\`). No header or key is set once: each operation declares \`security: []\` and names the
signed fields and string in its \`x-body-signature\` extension.

- The signed message is the UTF-8 bytes of \`merchantId\` immediately followed by the decimal digits
  of \`timestamp\` as sent, with no separator. \`authToken\` and every other field are not signed.
- \`hash\` is the HMAC-SHA256 of that message keyed with the merchant's secret key, as hex. Case does
  not matter and leading zeros may be left out (1 to 64 hex characters).
- \`timestamp\` is epoch milliseconds: a JSON integer or a string of digits. \`1.7636796E12\` or
  \`1763679600000.0\` are refused (a JSON number in those forms is read as its integer, which is not
  what was signed: the 401 says so). It must be within ±5 minutes of the server clock, else \`401\`
  errorCode 3, whose message states the server's time (also in the \`Date\` header).
- The examples of this document hold placeholders (\`<your-merchant-id>\`, \`<hex HMAC-SHA256 …>\`) where
  your merchant id and signature go. To check a signing implementation, \`docs/signing-test-vectors.json\`
  has worked examples (with the local demo merchant's development secret, which no production deployment
  loads).

## Signature version 2 (body-bound, opt-in per merchant)

A merchant the operator has switched to version 2 also sends, on every request, the header
\`X-Signature: t=<epoch ms>,v1=<64 hex>\`: the HMAC-SHA256, keyed with the merchant's secret, of
\`<t>.<METHOD>.<path with query>.<raw body>\` (the body's bytes exactly as sent; empty for
\`GET /betSlip\`). The body fields above stay required and are checked first.

## Answers

- Every error is \`{"errorCode": <int>, "errorMessage": "<text>"}\` (schema \`Error\`); every answer
  carries \`X-Request-Id\`, and \`RateLimit-Limit\`, \`RateLimit-Remaining\`, \`RateLimit-Reset\` while the
  merchant has a rate limit (1,000 a second by default).
- The three cancels answer \`200\` with an empty body and the job id in \`X-Job-Id\` once the job is
  stored (the interface's answer); with \`Prefer: return=representation\`, the body is \`{"jobId"}\`
  as JSON. A dry run answers its counts.
  Follow a job with \`jobs/status\`, list a merchant's jobs with \`jobs/list\`, what a job cancelled
  with \`jobs/rewards\` (its counts say how many identifiers were not found or not cancellable), or
  receive the webhooks below.

## Retrying

| errorCode | HTTP | retry? |
|---|---|---|
| 1, 4, 5, 6, 10, 12 | 400, 403, 413, 415, 404, 422 | no: fix the request |
| 2 | 401 | no, unless the secret was just rotated |
| 3 | 401 | yes, once, after correcting the clock from the server time in the message |
| 7 | 429 | yes, after \`Retry-After\`, same Idempotency-Key |
| 11 | 503 | yes, after \`Retry-After\`, same Idempotency-Key (nothing was stored) |
| 13 | 409 | \`Retry-After\` present: yes, same key; absent (abort of a finished job): no, final |
| 99 | 500 | a cancel: yes, with the same Idempotency-Key (the key makes it safe); a read: yes |
| timeout | — | a cancel: retry with the same Idempotency-Key; a read: yes |

## Pages

Every list is keyset-paginated: pass the previous page's \`next\` as \`after\`; \`next\` is \`null\` on
the last page (\`jobs/list\`, \`jobs/rewards\`). \`readAll\` is the interface's bare
array; its optional \`limit\`/\`offset\` are kept for compatibility.
`.trim();

export const adminDescription = `
The admin plane of the merchant rewards gateway, on its own listener (ADMIN_PORT), for operators only.
Merchants use the merchant document (openapi/merchant.json) instead.

## Operators

\`/admin/v1/...\` routes take \`Authorization: Bearer <token>\` of one of the deployment's operators
(ADMIN_TOKENS, \`name:token,...\`; ADMIN_TOKEN is the operator \`admin\`) and do not exist while none
is set. Every write is recorded with the operator's name in the audit log (\`GET /admin/v1/audit\`).
The queue dashboard is at \`/admin/queues\` (same tokens, or HTTP Basic with the token as password);
it is read-only unless DASHBOARD_WRITE=true. Prometheus scrapes \`/metrics\` here.

## Errors

Every error answers \`{"errorCode": <int>, "errorMessage": "<text>"}\` (schema \`Error\`) and every
answer carries \`X-Request-Id\`.
`.trim();
