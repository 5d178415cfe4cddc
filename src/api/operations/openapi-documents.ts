import { createRequire } from 'node:module';
import { JobStatusSchema } from '../../shared/jobs/job-status-schema.js';
import { type AnyWebhookEventType, allWebhookEventTypes } from '../../shared/webhooks/webhook-catalogue.js';
import { WebhookTestDataSchema, webhookEventCatalogue } from '../../shared/webhooks/webhook-events.js';
import type { App } from '../context.js';
import { SIGNING_EXAMPLE_PLACEHOLDERS } from '../http/schemas.js';
import { createOpenApiApp } from '../library-bypasses/json-body-validation.js';
import { registerAdminRoutes } from '../merchants/admin-routes.js';
import { registerMerchantRoutes } from '../routes.js';
import { adminDescription, merchantDescription } from './openapi-descriptions.js';
import { registerHealthRoutes, registerMetricsRoute } from './operations-routes.js';

/**
 * The two OpenAPI 3.1 documents, built from the same registrations as the server (so from the zod
 * schemas that validate requests) on an application of their own, without deps, a database or a
 * listener: `npm run openapi` writes them to openapi/, and the server serves the very same JSON.
 * The merchant document holds only what a merchant calls; the admin one, the operator's routes.
 */

// package.json is outside the compiled tree (rootDir is src); this file sits three levels below the
// project root both as source (src/api/operations) and built (dist/api/operations).
const { version } = createRequire(import.meta.url)('../../../package.json') as { version: string };

export type OpenApiDocument = ReturnType<App['getOpenAPI31Document']>;
type Operation = NonNullable<NonNullable<OpenApiDocument['paths']>[string]['post']>;
type MerchantOperation = { method: string; operation: Operation };

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

/** The signed operations: /api/v1/... and /betSlip (not health). */
function merchantOperationsOf(document: OpenApiDocument): MerchantOperation[] {
  return Object.entries(document.paths ?? {})
    .filter(([path]) => path.startsWith('/api/v1/') || path === '/betSlip')
    .flatMap(([, item]) =>
      METHODS.flatMap((method) => (item[method] ? [{ method, operation: item[method] as Operation }] : [])),
    );
}

const headerRef = (name: string) => ({ $ref: `#/components/headers/${name}` });

const merchantHeaders = {
  XRequestId: {
    description: "The caller's X-Request-Id, or a generated one; quote it when reporting a problem",
    schema: { type: 'string' as const },
  },
  RateLimitPolicy: {
    description:
      'The merchant\'s quota as the IETF field (draft-ietf-httpapi-ratelimit-headers-10): `"default";q=<requests>;w=1`, ' +
      'q requests per window of w seconds; sent whenever a limit is in force',
    schema: { type: 'string' as const, example: '"default";q=1000;w=1' },
  },
  RateLimit: {
    description:
      'What is left of the quota as the IETF field: `"default";r=<remaining>;t=<seconds>`, r requests left in ' +
      'the current window, which resets in t seconds',
    schema: { type: 'string' as const, example: '"default";r=999;t=1' },
  },
  RateLimitLimit: {
    description: "Deprecated (read RateLimit-Policy): requests per window (one second) of the merchant's rate limit",
    deprecated: true,
    schema: { type: 'integer' as const },
  },
  RateLimitRemaining: {
    description: 'Deprecated (read RateLimit): requests left in the current window',
    deprecated: true,
    schema: { type: 'integer' as const },
  },
  RateLimitReset: {
    description: 'Deprecated (read RateLimit): seconds until the current window resets',
    deprecated: true,
    schema: { type: 'integer' as const },
  },
  RetryAfter: {
    description:
      'Seconds to wait before retrying. Sent on 429 (errorCode 7), 503 (errorCode 11) and on the 409 (errorCode 13) ' +
      'that invites a retry (Idempotency-Key still being stored, job rewards still being listed)',
    schema: { type: 'integer' as const, minimum: 0 },
  },
};

/** The string a version-2 `X-Signature` signs, as the `x-signed-string` extensions name it. */
const SIGNATURE_V2_SIGNED_STRING = '{t}.{METHOD}.{path with query}.{raw body}';

const signatureV2Parameter = {
  name: 'X-Signature',
  in: 'header' as const,
  required: false,
  description:
    'Signature version 2 only (a merchant the operator switched to it; others leave it out, and it is ignored ' +
    'for them): `t=<epoch ms>,v1=<64 hex>`, the HMAC-SHA256 (merchant secret) of `<t>.<METHOD>.<path with ' +
    'query>.<raw body>`, computed per request over the bytes sent. Missing, malformed or wrong: 401 errorCode 2; ' +
    '`t` outside the window: 401 errorCode 3.',
  schema: {
    type: 'string' as const,
    pattern: '^t=\\d{1,16},v1=[0-9a-fA-F]{64}$',
    // A placeholder (schemas.ts); docs/signing-test-vectors.json has a worked example.
    example: SIGNING_EXAMPLE_PLACEHOLDERS.xSignature,
  },
  'x-signed-string': SIGNATURE_V2_SIGNED_STRING,
};

/**
 * The merchant signature, for generators: OpenAPI has no security scheme for a signature carried in the
 * body, so the operations declare `security: []` (no header or key a client could set once) and carry
 * this extension instead, naming the signed fields and the string they sign.
 */
const bodySignature = (source: 'body' | 'query') => ({
  in: source,
  fields: ['merchantId', 'timestamp', 'hash'],
  signedString: '{merchantId}{timestamp}',
  algorithm: 'HMAC-SHA256',
  key: 'merchant secret',
  output: 'hash, as hex',
  version2: { header: 'X-Signature', signedString: SIGNATURE_V2_SIGNED_STRING },
});

/** One webhook event of the merchant's endpoint (Standard Webhooks). */
function webhookOperation(type: AnyWebhookEventType) {
  const entry = webhookEventCatalogue[type];
  const header = (name: string, description: string) => ({
    name,
    in: 'header' as const,
    required: true,
    description,
    schema: { type: 'string' as const },
  });
  return {
    post: {
      operationId: `webhook${type
        .split('.')
        .map((part) => part[0]?.toUpperCase() + part.slice(1))
        .join('')}`,
      summary: `${type}: ${entry.summary}`,
      description:
        "POSTed to the merchant's webhook URL. Standard Webhooks. " +
        'Verify `webhook-signature` over `<webhook-id>.<webhook-timestamp>.<raw body>` with ' +
        'HMAC-SHA256 keyed with the base64-decoded secret after `whsec_`; reject a `webhook-timestamp` more than ' +
        '5 minutes from your clock. The same event may arrive more than once (same webhook-id) and out of order.',
      parameters: [
        header('webhook-id', 'The event id, the same on every retry: process each event once'),
        header('webhook-timestamp', 'This attempt, in epoch seconds'),
        header(
          'webhook-signature',
          'Space-separated `v1,<base64 HMAC-SHA256>` entries; one match is enough. For 24 h after webhooks/rotateSecret ' +
            "there are two: the new secret's and the previous one's",
        ),
      ],
      requestBody: {
        required: true,
        content: {
          'application/json': {
            schema: {
              type: 'object' as const,
              required: ['type', 'timestamp', 'data'],
              properties: {
                type: { type: 'string' as const, const: type },
                timestamp: {
                  type: 'string' as const,
                  format: 'date-time',
                  description:
                    'When the event happened, ISO 8601 (the only ISO date of the API: the body is Standard Webhooks)',
                },
                data: { $ref: `#/components/schemas/${entry.dataComponent}` },
              },
            },
            example: entry.example,
          },
        },
      },
      // Signed by the service (webhook-signature), not by a scheme the merchant's endpoint declares.
      security: [],
      responses: {
        '2XX': {
          description: 'Delivered. Answer within 10 seconds; anything else is retried (5 s … 10 h), then given up',
        },
      },
    },
  };
}

function baseDocument(app: App, title: string, description: string): OpenApiDocument {
  return app.getOpenAPI31Document({
    openapi: '3.1.0',
    info: { title, version, description },
    servers: [{ url: '/', description: 'The server that serves this document' }],
  });
}

/** What the merchants' listener serves: the /api/v1 routes and /betSlip (their signature, limits, webhooks), and health. */
export function buildMerchantDocument(): OpenApiDocument {
  const app = createOpenApiApp();
  registerHealthRoutes(app);
  registerMerchantRoutes(app, []);
  // Registered only to be referenced by the webhooks below.
  app.openAPIRegistry.register('JobStatus', JobStatusSchema);
  app.openAPIRegistry.register('WebhookTestData', WebhookTestDataSchema);
  const document = baseDocument(app, 'Merchant rewards gateway: merchant API', merchantDescription);
  document.tags = [
    { name: 'Cancellation', description: 'Queued reward cancellation, jobs and their outcome' },
    { name: 'Reward configurations', description: 'Reading the merchant reward configurations' },
    { name: 'Bet slip', description: 'Session token validation and bet slip' },
    {
      name: 'Webhooks',
      description: 'Your webhook endpoint, its secret, the delivery log, sending events again and test events',
    },
    { name: 'Operations', description: 'Health and readiness' },
  ];
  document.components ??= {};
  document.components.parameters = { ...document.components.parameters, XSignature: signatureV2Parameter };
  document.components.headers = merchantHeaders;
  for (const { method, operation } of merchantOperationsOf(document)) {
    // Signed in the body (or query), not by a header a client could set once: see bodySignature.
    operation.security = [];
    Object.assign(operation, { 'x-body-signature': bodySignature(method === 'get' ? 'query' : 'body') });
    operation.parameters = [...(operation.parameters ?? []), { $ref: '#/components/parameters/XSignature' }];
    for (const [status, response] of Object.entries(operation.responses ?? {})) {
      if ('$ref' in response) continue;
      const retry =
        status === '429' || status === '503' || status === '409' ? { 'Retry-After': headerRef('RetryAfter') } : {};
      response.headers = {
        ...response.headers,
        'X-Request-Id': headerRef('XRequestId'),
        'RateLimit-Policy': headerRef('RateLimitPolicy'),
        RateLimit: headerRef('RateLimit'),
        'RateLimit-Limit': headerRef('RateLimitLimit'),
        'RateLimit-Remaining': headerRef('RateLimitRemaining'),
        'RateLimit-Reset': headerRef('RateLimitReset'),
        ...retry,
      };
    }
  }
  document.webhooks = Object.fromEntries(allWebhookEventTypes.map((type) => [type, webhookOperation(type)]));
  return document;
}

/** What the admin listener serves: the admin API (an operator's token), health, readiness and metrics. */
export function buildAdminDocument(): OpenApiDocument {
  const app = createOpenApiApp();
  registerHealthRoutes(app);
  registerMetricsRoute(app);
  registerAdminRoutes(app);
  const document = baseDocument(app, 'Merchant rewards gateway: admin plane', adminDescription);
  document.tags = [
    {
      name: 'Admin',
      description:
        "Merchants, configurations, rewards, sessions, webhooks, jobs and the audit log (an operator's token)",
    },
    { name: 'Operations', description: 'Health, readiness and metrics' },
  ];
  document.components ??= {};
  document.components.securitySchemes = {
    adminBearer: {
      type: 'http',
      scheme: 'bearer',
      description: "An operator's token (ADMIN_TOKENS, ADMIN_TOKEN). Admin routes do not exist while none is set.",
    },
    // The admin routes may declare the scheme themselves; theirs wins.
    ...document.components.securitySchemes,
  };
  // Every admin operation needs the token, whether or not its route definition says so.
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    if (!path.startsWith('/admin/')) continue;
    for (const method of METHODS) {
      const operation = item[method];
      if (operation && !operation.security) operation.security = [{ adminBearer: [] }];
    }
  }
  return document;
}

/** The documents as written to openapi/: stable key order (as built), two-space indent, final newline. */
export function documentText(document: OpenApiDocument): string {
  return `${JSON.stringify(document, null, 2)}\n`;
}
