import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { SIGNING_EXAMPLE_PLACEHOLDERS } from '../../src/api/http/schemas.js';
import { buildAdminDocument, buildMerchantDocument, documentText } from '../../src/api/operations/openapi-documents.js';
import { useTestContext } from '../helpers/test-context.js';

type Operation = {
  operationId?: string;
  responses?: Record<string, { headers?: Record<string, unknown> }>;
  security?: Array<Record<string, string[]>>;
};
type OpenApiDocument = {
  openapi: string;
  info: { title: string; version: string; description?: string };
  servers?: Array<{ url: string }>;
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, unknown>; securitySchemes?: Record<string, Record<string, unknown>> };
  webhooks?: Record<string, Record<string, Operation>>;
};

const { api } = useTestContext({ api: true });
let document: OpenApiDocument;
/** The admin listener's own document. */
let adminDocument: OpenApiDocument;

async function fetchDocument(url: string): Promise<OpenApiDocument> {
  const response = await fetch(url);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  return (await response.json()) as OpenApiDocument;
}

beforeAll(async () => {
  document = await fetchDocument(`${api.baseUrl}/openapi.json`);
  adminDocument = await fetchDocument(`${api.adminUrl}/openapi.json`);
});

/** Hono's `/a/:id` (or `/a/:id{regex}`) is OpenAPI's `/a/{id}`. */
const toOpenApiPath = (path: string) => path.replace(/:([A-Za-z0-9_]+)(\{[^}]*\})?/g, '{$1}');

const isUndocumented = (path: string) =>
  path === '/openapi.json' ||
  path === '/docs' ||
  path.startsWith('/docs/') ||
  path === '/admin/queues' ||
  path.startsWith('/admin/queues/') ||
  // The merchant portal: a page and that page's own calls (docs/portal.md), no part of the merchant API.
  path === '/portal' ||
  path.startsWith('/portal/');

/** Every route a request can reach on a listener, as `METHOD path`, without middleware entries. */
function registeredRoutes(app = api.app): string[] {
  const routes = app.routes
    .filter((route) => route.method !== 'ALL' && !route.path.includes('*') && !isUndocumented(route.path))
    .map((route) => `${route.method.toLowerCase()} ${toOpenApiPath(route.path)}`);
  return [...new Set(routes)].sort();
}

function documentedOperations(of = document): string[] {
  return Object.entries(of.paths)
    .flatMap(([path, item]) => Object.keys(item).map((method) => `${method} ${path}`))
    .sort();
}

const checkedIn = (name: string) => readFileSync(new URL(`../../openapi/${name}`, import.meta.url), 'utf8');

const allOperations = (each: OpenApiDocument) =>
  Object.entries(each.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, operation]) => ({ path, method, operation })),
  );

describe('the checked-in documents (npm run openapi)', () => {
  it('are what the script builds from the routes, and what the server serves', () => {
    expect(checkedIn('merchant.json')).toBe(documentText(buildMerchantDocument()));
    expect(checkedIn('admin.json')).toBe(documentText(buildAdminDocument()));
    expect(JSON.parse(checkedIn('merchant.json'))).toEqual(document);
    expect(JSON.parse(checkedIn('admin.json'))).toEqual(adminDocument);
  });

  it('split merchant from admin: the merchant document has no admin or operations route', () => {
    for (const path of Object.keys(document.paths))
      expect(path).toMatch(/^\/api\/v1\/|^\/betSlip$|^\/healthz$|^\/readyz$/);
    for (const path of Object.keys(adminDocument.paths))
      expect(path).toMatch(/^\/admin\/|^\/healthz$|^\/readyz$|^\/metrics$/);
  });

  it('give every operation an operationId, unique in its document', () => {
    for (const each of [document, adminDocument]) {
      const ids = allOperations(each).map(({ operation }) => operation.operationId);
      expect(ids.filter((id) => typeof id !== 'string' || !/^[a-zA-Z]+$/.test(id))).toEqual([]);
      expect(new Set(ids).size).toBe(ids.length);
    }
  });

  it('declare every operation and webhook security: [] (signed in the body), with the signed fields named', () => {
    // No scheme a generator would fill once and send on every request: the signature is per request.
    expect(document.components?.securitySchemes).toBeUndefined();
    for (const { path, method, operation } of allOperations(document)) {
      expect(operation.security, `${method} ${path}`).toEqual([]);
      const signed = path.startsWith('/api/v1/') || path === '/betSlip';
      const extension = (operation as Record<string, unknown>)['x-body-signature'];
      if (!signed) expect(extension, `${method} ${path}`).toBeUndefined();
      else
        expect(extension, `${method} ${path}`).toMatchObject({
          in: method === 'get' ? 'query' : 'body',
          fields: ['merchantId', 'timestamp', 'hash'],
          signedString: '{merchantId}{timestamp}',
          algorithm: 'HMAC-SHA256',
        });
    }
    for (const [name, item] of Object.entries(document.webhooks ?? {})) {
      expect(item.post?.security, name).toEqual([]);
    }
  });

  it('declare Retry-After on 409, 429 and 503, and RateLimit-Policy, RateLimit, RateLimit-* and X-Request-Id on every merchant answer', () => {
    const signed = allOperations(document).filter(({ path }) => path.startsWith('/api/v1/') || path === '/betSlip');
    for (const { path, method, operation } of signed) {
      for (const [status, response] of Object.entries(operation.responses ?? {})) {
        const headers = Object.keys(response.headers ?? {});
        expect(headers, `${method} ${path} ${status}`).toEqual(
          expect.arrayContaining([
            'X-Request-Id',
            'RateLimit-Policy',
            'RateLimit',
            'RateLimit-Limit',
            'RateLimit-Remaining',
            'RateLimit-Reset',
          ]),
        );
        if (['409', '429', '503'].includes(status))
          expect(headers, `${method} ${path} ${status}`).toContain('Retry-After');
      }
    }
  });

  it('describe every webhook event with its Standard Webhooks headers, its data schema and an example that matches it', () => {
    expect(Object.keys(document.webhooks ?? {}).sort()).toEqual([
      'job.cancelled',
      'job.completed',
      'job.failed',
      'webhook.test',
    ]);
    for (const [type, item] of Object.entries(document.webhooks ?? {})) {
      const text = JSON.stringify(item.post);
      for (const header of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) expect(text).toContain(header);
      const body = (item.post as any).requestBody.content['application/json'];
      const component = type === 'webhook.test' ? 'WebhookTestData' : 'JobStatus';
      expect(body.schema.properties.data.$ref).toBe(`#/components/schemas/${component}`);
      expect(body.example.type).toBe(type);
      // The example's data has every field its schema requires.
      const schemas = (document.components?.schemas ?? {}) as Record<string, { required: string[] }>;
      const required = schemas[component]?.required ?? [];
      expect(required.length).toBeGreaterThan(0);
      for (const field of required) expect(body.example.data, `${type}: ${field}`).toHaveProperty(field);
    }
    expect(document.components?.schemas).toHaveProperty('JobStatus');
  });

  it("carry placeholders, never the demo merchant's values, that verify once the test vectors fill them", () => {
    const vectors = JSON.parse(checkedIn('../docs/signing-test-vectors.json')) as {
      v1: Array<{ merchantId: string; secret: string; timestamp: number | string; hash: string }>;
      v2: Array<{ secret: string; t: number; method: string; pathWithQuery: string; body: string; xSignature: string }>;
    };
    const v1 = vectors.v1[0] as (typeof vectors.v1)[number];
    const text = JSON.stringify(document);
    // A request copied from the document authenticates nowhere: not even where the demo data is loaded.
    for (const demo of [v1.merchantId, v1.secret, v1.hash]) expect(text).not.toContain(demo);
    for (const vector of vectors.v2) expect(text).not.toContain(vector.xSignature);

    const cancel = document.components?.schemas?.CancelRequest as {
      example: Record<string, unknown>;
      properties: Record<string, { example?: unknown }>;
    };
    const { merchantId, timestamp, hash } = cancel.properties;
    expect([merchantId?.example, hash?.example]).toEqual([
      SIGNING_EXAMPLE_PLACEHOLDERS.merchantId,
      SIGNING_EXAMPLE_PLACEHOLDERS.hash,
    ]);
    expect(timestamp?.example).toBe(v1.timestamp);
    // The placeholders filled with the vector's values: the example is the v2 vector of a cancel, and verifies.
    const filled: Record<string, unknown> = { ...cancel.example, merchantId: v1.merchantId, hash: v1.hash };
    expect(createHmac('sha256', v1.secret).update(`${filled.merchantId}${filled.timestamp}`).digest('hex')).toBe(
      filled.hash,
    );
    const v2 = vectors.v2.find((vector) => vector.pathWithQuery === '/api/v1/integration/rewards/cancel');
    expect(JSON.stringify(filled)).toBe(v2?.body);
    const xSignature = (document.components as { parameters: Record<string, { schema: { example: string } }> })
      .parameters.XSignature?.schema.example;
    expect(xSignature).toBe(SIGNING_EXAMPLE_PLACEHOLDERS.xSignature);
    const signed = createHmac('sha256', v1.secret)
      .update(`${v2?.t}.POST./api/v1/integration/rewards/cancel.${JSON.stringify(filled)}`)
      .digest('hex');
    expect(v2?.xSignature).toBe(`t=${v2?.t},v1=${signed}`);
  });
});

describe('GET /openapi.json', () => {
  it('is an OpenAPI 3.1 document describing the gateway', () => {
    expect(document.openapi).toMatch(/^3\.1\./);
    expect(document.info.title).toBe('Merchant rewards gateway: merchant API');
    expect(document.info.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(document.info.description).toContain('HMAC-SHA256');
    expect(document.info.description).toContain('merchantId');
    expect(document.servers?.length).toBeGreaterThan(0);
  });

  it('documents every route the app serves, with its method, and nothing else', () => {
    const routes = registeredRoutes();
    expect(routes).toContain('post /api/v1/integration/rewards/cancel');
    expect(routes).toContain('get /betSlip');
    expect(documentedOperations()).toEqual(routes);
  });

  it('documents nothing of the admin plane: it is not on this listener', () => {
    const paths = Object.keys(document.paths);
    expect(paths.filter((path) => path.startsWith('/admin') || path === '/metrics')).toEqual([]);
    expect(document.components?.securitySchemes?.adminBearer).toBeUndefined();
  });

  it('has the shared Error schema, and every $ref resolves', () => {
    expect(document.components?.schemas?.Error).toMatchObject({
      type: 'object',
      properties: { errorCode: expect.any(Object), errorMessage: expect.any(Object) },
    });
    const refs = [...JSON.stringify(document).matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)].map((m) => m[1]);
    expect(refs.length).toBeGreaterThan(0);
    for (const name of new Set(refs)) expect(document.components?.schemas, name).toHaveProperty([name as string]);
  });

  it('documents 400, 401 and 503 (as Error bodies) on every merchant route', () => {
    const merchantOperations = Object.entries(document.paths)
      .filter(([path]) => path.startsWith('/api/v1/') || path === '/betSlip')
      .flatMap(([path, item]) => Object.entries(item).map(([method, operation]) => ({ path, method, operation })));
    expect(merchantOperations.length).toBeGreaterThanOrEqual(7);
    for (const { path, method, operation } of merchantOperations) {
      for (const status of ['400', '401', '503']) {
        expect(JSON.stringify(operation.responses?.[status]), `${method} ${path} ${status}`).toContain(
          '#/components/schemas/Error',
        );
      }
    }
  });

  it('declares the X-Signature header (signature version 2) on every merchant operation', () => {
    const parameters = (document.components as { parameters?: Record<string, Record<string, unknown>> }).parameters;
    expect(parameters?.XSignature).toMatchObject({
      name: 'X-Signature',
      in: 'header',
      required: false,
      'x-signed-string': '{t}.{METHOD}.{path with query}.{raw body}',
    });
    const merchantOperations = Object.entries(document.paths)
      .filter(([path]) => path.startsWith('/api/v1/') || path === '/betSlip')
      .flatMap(([path, item]) => Object.entries(item).map(([method, operation]) => ({ path, method, operation })));
    expect(merchantOperations.length).toBeGreaterThanOrEqual(7);
    for (const { path, method, operation } of merchantOperations) {
      expect((operation as { parameters?: unknown[] }).parameters, `${method} ${path}`).toContainEqual({
        $ref: '#/components/parameters/XSignature',
      });
    }
    expect(document.info.description).toContain('X-Signature');
  });

  it('documents signatureVersion on the admin merchant update, request and answer', () => {
    const schemas = adminDocument.components?.schemas as Record<string, { properties?: Record<string, unknown> }>;
    expect(schemas.AdminUpdateMerchantRequest?.properties?.signatureVersion).toBeDefined();
    expect(schemas.AdminMerchant?.properties?.signatureVersion).toBeDefined();
  });

  it('documents the Idempotency-Key header with its 409 and 422 answers, and the dry-run counts', () => {
    const cancelRoutes = ['cancel', 'bulkCancel', 'bulkCancelByQuery'].map(
      (name) => document.paths[`/api/v1/integration/rewards/${name}`]?.post as Operation & { parameters?: unknown[] },
    );
    for (const operation of cancelRoutes) {
      expect(operation.parameters).toContainEqual(
        expect.objectContaining({ name: 'idempotency-key', in: 'header', required: false }),
      );
      expect(JSON.stringify(operation.responses?.['409'])).toContain('#/components/schemas/Error');
      expect(JSON.stringify(operation.responses?.['422'])).toContain('#/components/schemas/Error');
      expect(JSON.stringify(operation.responses?.['200'])).toContain('Idempotent-Replayed');
    }
    expect(JSON.stringify(cancelRoutes[1]?.responses?.['200'])).toContain('#/components/schemas/BulkCancelDryRun');
    expect(JSON.stringify(cancelRoutes[2]?.responses?.['200'])).toContain(
      '#/components/schemas/BulkCancelByQueryDryRun',
    );
    const listing = document.paths['/api/v1/integration/jobs/rewards']?.post;
    expect(JSON.stringify(listing?.responses?.['200'])).toContain('#/components/schemas/JobRewardsPage');
    expect(JSON.stringify(listing?.responses?.['404'])).toContain('#/components/schemas/Error');
  });

  it("declares the cancels' 200 as no content (the interface's answer), the asked-for JSON bodies beside it", () => {
    const bodies = { cancel: [], bulkCancel: ['BulkCancelDryRun'], bulkCancelByQuery: ['BulkCancelByQueryDryRun'] };
    for (const [name, dryRun] of Object.entries(bodies)) {
      const ok = document.paths[`/api/v1/integration/rewards/${name}`]?.post?.responses?.['200'] as Record<
        string,
        unknown
      >;
      // No media type: a generated client or a fuzzer takes the empty body without Content-Type as valid.
      expect(ok.content).toBeUndefined();
      expect(ok.headers).toHaveProperty('X-Job-Id');
      expect(ok.headers).toHaveProperty('Preference-Applied');
      expect(ok['x-content-on-request']).toEqual(
        [['Prefer: return=representation', 'CancelAccepted'], ...dryRun.map((schema) => ['dryRun: true', schema])].map(
          ([when, schema]) => ({
            when,
            content: { 'application/json': { schema: { $ref: `#/components/schemas/${schema}` } } },
          }),
        ),
      );
    }
    expect(document.components?.schemas).toHaveProperty('CancelAccepted');
  });

  it('declares the adminBearer scheme and requires it on every admin operation (admin listener)', () => {
    expect(adminDocument.components?.securitySchemes?.adminBearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    const adminOperations = Object.entries(adminDocument.paths)
      .filter(([path]) => path.startsWith('/admin/'))
      .flatMap(([path, item]) => Object.entries(item).map(([method, operation]) => ({ path, method, operation })));
    expect(adminOperations.length).toBeGreaterThanOrEqual(13);
    for (const { path, method, operation } of adminOperations) {
      expect(operation.security, `${method} ${path}`).toContainEqual({ adminBearer: [] });
    }
    for (const [path, item] of Object.entries(adminDocument.paths).filter(([p]) => !p.startsWith('/admin/'))) {
      for (const [method, operation] of Object.entries(item)) {
        expect(operation.security, `${method} ${path}`).toEqual([]);
      }
    }
  });
});

describe('GET /openapi.json on the admin listener', () => {
  it('documents every route of the admin listener, with its method, and nothing else', () => {
    const routes = registeredRoutes(api.adminApp);
    expect(routes).toContain('patch /admin/v1/merchants/{merchantId}');
    expect(routes).toContain('get /admin/v1/audit');
    expect(routes).toContain('get /metrics');
    expect(documentedOperations(adminDocument)).toEqual(routes);
    expect(adminDocument.info.title).toBe('Merchant rewards gateway: admin plane');
  });
});

describe('GET /docs', () => {
  it('answers an HTML reference page that reads /openapi.json', async () => {
    const response = await api.get('/docs');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await response.text();
    expect(html).toMatch(/<html/i);
    expect(html).toContain('/openapi.json');
    expect(html).toContain('Merchant rewards gateway API');
  });
});
