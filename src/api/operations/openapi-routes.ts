import { createRequire } from 'node:module';
import type { App } from '../context.js';
import { registerReferencePage } from './reference-page.js';

const OPENAPI_PATH = '/openapi.json';
const DOCS_PATH = '/docs';

// package.json is outside the compiled tree (rootDir is src); this file sits three levels below the
// project root both as source (src/api/operations) and built (dist/api/operations).
const { version } = createRequire(import.meta.url)('../../../package.json') as { version: string };

const description = `
Connects merchants to the game platform: cancel free-bet rewards (queued, applied in batches by
workers), read reward configurations, and validate a game session token with its bet slip.

## Merchant signature

Every merchant request (\`/api/v1/...\` and \`/betSlip\`) carries \`merchantId\`, \`timestamp\` and
\`hash\` in its JSON body (query parameters for \`GET /betSlip\`).

- The signed message is the UTF-8 bytes of \`merchantId\` immediately followed by the decimal digits
  of \`timestamp\` as sent, with no separator. \`authToken\` and every other field are not signed.
- \`hash\` is the HMAC-SHA256 of that message keyed with the merchant's secret key, as hex. Case does
  not matter and leading zeros may be left out (1 to 64 hex characters).
- \`timestamp\` is epoch milliseconds (a JSON integer or a string of digits) and must be within
  ±5 minutes of the server clock (configurable), else \`401\` with errorCode 3 (TIMESTAMP_EXPIRED).
- An unknown or disabled merchant and a wrong hash all answer \`401\` with errorCode 2
  (AUTHENTICATION_FAILED). During a secret rotation the previous secret also verifies until it expires.

Example: merchantId \`8f2a1b4e-3c5d-4e6f-8a9b-0c1d2e3f4a5b\`, timestamp \`1763679600000\`: sign the
string \`8f2a1b4e-3c5d-4e6f-8a9b-0c1d2e3f4a5b1763679600000\`.

## Signature version 2 (body-bound, opt-in per merchant)

The signature above covers only \`merchantId\` and \`timestamp\`, so a signature seen once could sign
any other request of the merchant within the window. A merchant the operator has switched to version 2
(\`PATCH /admin/v1/merchants/{merchantId}\` \`{"signatureVersion": 2}\`) also sends, on every request,
the header \`X-Signature: t=<epoch ms>,v1=<64 hex>\`: the HMAC-SHA256, keyed with the merchant's secret,
of \`<t>.<METHOD>.<path with query>.<raw body>\` (the body's bytes exactly as sent; empty for
\`GET /betSlip\`). The fields above stay required and are checked first. A missing, malformed or wrong
header is \`401\` errorCode 2; a \`t\` outside the window is \`401\` errorCode 3. It binds the time,
method, path, query and body; it does not stop the replay of the identical request within the window.

## Errors

Every error answers \`{"errorCode": <int>, "errorMessage": "<text>"}\` (schema \`Error\`) and every
answer carries \`X-Request-Id\`. Cancel requests answer \`200\` with an empty body and an \`X-Job-Id\`
header once the job is stored; follow it with \`POST /api/v1/integration/jobs/status\`.

## Administration

\`/admin/v1/...\` routes take \`Authorization: Bearer <ADMIN_TOKEN>\` and do not exist while
ADMIN_TOKEN is unset. The queue dashboard is at \`/admin/queues\` (same token, or HTTP Basic with the
token as password).
`.trim();

type OpenApiDocument = ReturnType<App['getOpenAPI31Document']>;

const signatureV2Parameter = {
  name: 'X-Signature',
  in: 'header' as const,
  required: false,
  description:
    'Required of merchants on signature version 2, ignored for the others: `t=<epoch ms>,v1=<64 hex>`, the ' +
    'HMAC-SHA256 (merchant secret) of `<t>.<METHOD>.<path with query>.<raw body>`. Missing, malformed or ' +
    'wrong: 401 errorCode 2; `t` outside the window: 401 errorCode 3.',
  schema: {
    type: 'string' as const,
    pattern: '^t=\\d{1,16},v1=[0-9a-fA-F]{64}$',
    example: 't=1763679600000,v1=2c30336ef9c23800af19421f6d4e614d6b442a89d10394ba7b9841ca07691702',
  },
};

/**
 * The OpenAPI 3.1 document, generated from the zod schemas the routes validate with, and a reference
 * page over it. Call after every other route is registered. Both routes are plain (not `openapi`)
 * routes so that they stay out of the document they serve.
 */
export function registerDocs(app: App): void {
  let document: OpenApiDocument | undefined;

  app.get(OPENAPI_PATH, (c) => {
    // Routes are fixed once the app serves requests, so the document is built once.
    document ??= buildDocument(app);
    return c.json(document);
  });

  registerReferencePage(app, DOCS_PATH, OPENAPI_PATH);
}

function buildDocument(app: App): OpenApiDocument {
  const document = app.getOpenAPI31Document({
    openapi: '3.1.0',
    info: { title: 'Merchant rewards gateway', version, description },
    servers: [{ url: '/', description: 'The server that serves this document' }],
    tags: [
      { name: 'Cancellation', description: 'Queued reward cancellation and job status' },
      { name: 'Reward configurations', description: 'Reading the merchant reward configurations' },
      { name: 'Bet slip', description: 'Session token validation and bet slip' },
      { name: 'Admin', description: 'Creating merchants, configurations, rewards and sessions (ADMIN_TOKEN)' },
      { name: 'Operations', description: 'Health, readiness and metrics' },
    ],
  });

  document.components ??= {};
  document.components.securitySchemes = {
    adminBearer: {
      type: 'http',
      scheme: 'bearer',
      description: 'The ADMIN_TOKEN of the deployment. Admin routes do not exist while it is unset.',
    },
    // The admin routes may declare the scheme themselves; theirs wins.
    ...document.components.securitySchemes,
  };
  // Every admin operation needs the token, whether or not its route definition says so.
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    if (!path.startsWith('/admin/')) continue;
    for (const method of ['get', 'put', 'post', 'delete', 'patch'] as const) {
      const operation = item[method];
      if (operation && !operation.security) operation.security = [{ adminBearer: [] }];
    }
  }
  // Every merchant operation takes the version-2 header; declared once, referenced from each.
  document.components.parameters = { ...document.components.parameters, XSignature: signatureV2Parameter };
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    if (!path.startsWith('/api/v1/') && path !== '/betSlip') continue;
    for (const method of ['get', 'post'] as const) {
      const operation = item[method];
      if (operation)
        operation.parameters = [...(operation.parameters ?? []), { $ref: '#/components/parameters/XSignature' }];
    }
  }
  // Only the tags some operation uses, so the reference page has no empty sections.
  const used = new Set(
    Object.values(document.paths ?? {}).flatMap((item) =>
      (['get', 'put', 'post', 'delete', 'patch'] as const).flatMap((method) => item[method]?.tags ?? []),
    ),
  );
  document.tags = document.tags?.filter((tag) => used.has(tag.name));
  return document;
}
