import { describe, expect, it } from 'vitest';
import { useTestContext } from '../helpers/test-context.js';

const { env, api } = useTestContext({ api: true });

const SOME_UUID = '8f2a1b4e-3c5d-4e6f-8a9b-0c1d2e3f4a5b';
const basic = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`, 'utf8').toString('base64')}`;

const bearer = () => ({ authorization: `Bearer ${env.config.ADMIN_TOKEN}` });

/** The admin plane's paths, each with a valid operator token: answered on the admin listener. */
const adminRequests: Array<{ method: string; path: string; body?: unknown }> = [
  { method: 'POST', path: '/admin/v1/merchants', body: { name: 'Probe' } },
  { method: 'PATCH', path: `/admin/v1/merchants/${SOME_UUID}`, body: { status: 'DISABLED' } },
  { method: 'GET', path: '/admin/v1/audit' },
  { method: 'GET', path: `/admin/v1/jobs/${SOME_UUID}` },
  { method: 'GET', path: '/admin/queues' },
  { method: 'GET', path: '/admin/queues/api/queues' },
  { method: 'PUT', path: '/admin/queues/api/queues/cancel/clean/completed' },
  { method: 'GET', path: '/metrics' },
];

function send(baseUrl: string, request: { method: string; path: string; body?: unknown }) {
  return fetch(`${baseUrl}${request.path}`, {
    method: request.method,
    headers: { ...bearer(), 'content-type': 'application/json' },
    body: request.body === undefined ? undefined : JSON.stringify(request.body),
  });
}

describe('the merchants listener', () => {
  it('answers 404 NOT_FOUND to every admin-plane path, token or not, and runs none of them', async () => {
    for (const request of adminRequests) {
      for (const headers of [bearer(), { authorization: basic('ops', env.config.ADMIN_TOKEN as string) }, {}]) {
        const response = await fetch(`${api.baseUrl}${request.path}`, {
          method: request.method,
          headers: { ...headers, 'content-type': 'application/json' },
          body: request.body === undefined ? undefined : JSON.stringify(request.body),
        });
        expect(response.status, `${request.method} ${request.path}`).toBe(404);
        expect(response.headers.get('www-authenticate')).toBeNull();
        expect(await response.json()).toEqual({ errorCode: 10, errorMessage: 'Route not found' });
      }
    }
    // Nothing was created or recorded through the merchants' port.
    const merchants = await env.db.selectFrom('merchants').select('id').where('name', '=', 'Probe').execute();
    expect(merchants).toEqual([]);
    expect(await env.db.selectFrom('admin_audit_log').selectAll().execute()).toEqual([]);
  });

  it('still serves health, readiness and the merchant reference', async () => {
    for (const path of ['/healthz', '/readyz', '/openapi.json', '/docs']) {
      expect((await fetch(`${api.baseUrl}${path}`)).status, path).toBe(200);
    }
  });
});

describe('the admin listener', () => {
  it('serves every admin-plane path (none of them 404 for want of a route)', async () => {
    const expected: Record<string, number> = {
      'POST /admin/v1/merchants': 201,
      [`PATCH /admin/v1/merchants/${SOME_UUID}`]: 404, // no such merchant: the route answered
      'GET /admin/v1/audit': 200,
      [`GET /admin/v1/jobs/${SOME_UUID}`]: 404, // no such job
      'GET /admin/queues': 200,
      'GET /admin/queues/api/queues': 200,
      'PUT /admin/queues/api/queues/cancel/clean/completed': 403, // read-only dashboard
      'GET /metrics': 200,
    };
    for (const request of adminRequests) {
      const key = `${request.method} ${request.path}`;
      const response = await send(api.adminUrl, request);
      expect(response.status, key).toBe(expected[key]);
      if (response.status === 404)
        expect(await response.json()).not.toEqual({ errorCode: 10, errorMessage: 'Route not found' });
      else await response.body?.cancel();
    }
  });

  it('answers with the admin security headers on every page and error', async () => {
    const requests: Array<[string, Record<string, string>]> = [
      ['/admin/queues', bearer()],
      ['/admin/queues', {}], // the 401 with its Basic challenge
      ['/admin/v1/audit', bearer()],
      ['/admin/v1/audit', {}],
      ['/docs', {}],
      ['/openapi.json', {}],
      ['/metrics', {}],
      ['/no-such-page', {}],
    ];
    for (const [path, headers] of requests) {
      const response = await fetch(`${api.adminUrl}${path}`, { headers });
      await response.body?.cancel();
      const csp = response.headers.get('content-security-policy') ?? '';
      expect(csp, path).toContain("frame-ancestors 'none'");
      expect(response.headers.get('x-frame-options'), path).toBe('DENY');
      expect(response.headers.get('x-content-type-options'), path).toBe('nosniff');
      expect(response.headers.get('referrer-policy'), path).toBe('no-referrer');
    }
  });

  it('does not serve the merchant routes', async () => {
    const response = await fetch(`${api.adminUrl}/api/v1/integration/rewards/cancel`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(response.status).toBe(404);
  });
});
