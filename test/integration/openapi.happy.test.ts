import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../helpers/api.js';
import { createTestEnvironment, type TestEnvironment } from '../helpers/environment.js';

type Operation = { responses?: Record<string, unknown>; security?: Array<Record<string, string[]>> };
type OpenApiDocument = {
  openapi: string;
  info: { title: string; version: string; description?: string };
  servers?: Array<{ url: string }>;
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, unknown>; securitySchemes?: Record<string, Record<string, unknown>> };
};

let env: TestEnvironment;
let api: TestApi;
let document: OpenApiDocument;

beforeAll(async () => {
  env = await createTestEnvironment();
  api = await startTestApi(env);
  const response = await api.get('/openapi.json');
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  document = (await response.json()) as OpenApiDocument;
});
afterAll(async () => {
  await api?.close();
  await env?.close();
});

/** Hono's `/a/:id` (or `/a/:id{regex}`) is OpenAPI's `/a/{id}`. */
const toOpenApiPath = (path: string) => path.replace(/:([A-Za-z0-9_]+)(\{[^}]*\})?/g, '{$1}');

const isUndocumented = (path: string) =>
  path === '/openapi.json' ||
  path === '/docs' ||
  path.startsWith('/docs/') ||
  path === '/admin/queues' ||
  path.startsWith('/admin/queues/');

/** Every route a request can reach, as `METHOD path`, without middleware entries. */
function registeredRoutes(): string[] {
  const routes = api.app.routes
    .filter((route) => route.method !== 'ALL' && !route.path.includes('*') && !isUndocumented(route.path))
    .map((route) => `${route.method.toLowerCase()} ${toOpenApiPath(route.path)}`);
  return [...new Set(routes)].sort();
}

function documentedOperations(): string[] {
  return Object.entries(document.paths)
    .flatMap(([path, item]) => Object.keys(item).map((method) => `${method} ${path}`))
    .sort();
}

describe('GET /openapi.json', () => {
  it('is an OpenAPI 3.1 document describing the gateway', () => {
    expect(document.openapi).toMatch(/^3\.1\./);
    expect(document.info.title).toBe('Merchant rewards gateway');
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
    expect(parameters?.XSignature).toMatchObject({ name: 'X-Signature', in: 'header', required: false });
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
    const schemas = document.components?.schemas as Record<string, { properties?: Record<string, unknown> }>;
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

  it('declares the adminBearer scheme and requires it on every admin operation', () => {
    expect(document.components?.securitySchemes?.adminBearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    const adminOperations = Object.entries(document.paths)
      .filter(([path]) => path.startsWith('/admin/'))
      .flatMap(([path, item]) => Object.entries(item).map(([method, operation]) => ({ path, method, operation })));
    for (const { path, method, operation } of adminOperations) {
      expect(operation.security, `${method} ${path}`).toContainEqual({ adminBearer: [] });
    }
    for (const [path, item] of Object.entries(document.paths).filter(([p]) => !p.startsWith('/admin/'))) {
      for (const [method, operation] of Object.entries(item)) {
        expect(operation.security, `${method} ${path}`).toBeUndefined();
      }
    }
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
