import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../helpers/api.js';
import { createTestEnvironment, type TestEnvironment } from '../helpers/environment.js';

const DASHBOARD = '/admin/queues';

const basic = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`, 'utf8').toString('base64')}`;

describe('queue dashboard with ADMIN_TOKEN set', () => {
  let env: TestEnvironment;
  let api: TestApi;
  let token: string;

  beforeAll(async () => {
    env = await createTestEnvironment();
    api = await startTestApi(env);
    token = env.config.ADMIN_TOKEN as string;
  });
  afterAll(async () => {
    await api?.close();
    await env?.close();
  });

  it('refuses a request without credentials with 401 and a Basic challenge', async () => {
    for (const path of [DASHBOARD, `${DASHBOARD}/`, `${DASHBOARD}/api/queues`]) {
      const response = await api.get(path);
      expect(response.status, path).toBe(401);
      expect(response.headers.get('www-authenticate'), path).toMatch(/^Basic realm="queues"/);
      expect(response.headers.get('x-request-id'), path).toBeTruthy();
      expect(await response.json(), path).toEqual({ errorCode: 2, errorMessage: 'Authentication failed' });
    }
  });

  it('refuses a wrong bearer token, a wrong Basic password and other schemes', async () => {
    const refused = [
      `Bearer ${token}x`,
      `Bearer ${token.slice(0, -1)}`,
      'Bearer',
      basic('admin', 'not-the-admin-token'),
      basic(token, ''),
      `Basic ${Buffer.from(token).toString('base64')}`,
      `Token ${token}`,
      token,
    ];
    for (const authorization of refused) {
      const response = await api.get(DASHBOARD, { authorization });
      expect(response.status, authorization).toBe(401);
      expect(response.headers.get('www-authenticate'), authorization).toMatch(/^Basic realm="queues"/);
    }
  });

  it('serves the dashboard page to the bearer token', async () => {
    const response = await api.get(DASHBOARD, { authorization: `Bearer ${token}` });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await response.text();
    expect(html).toContain(`<base href="${DASHBOARD}/"`);
  });

  it('serves the page, its assets and its API to Basic auth with any user name', async () => {
    const authorization = basic('any-user', token);
    const page = await api.get(DASHBOARD, { authorization });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);

    // The page's script, served from @bull-board/ui through the same gate.
    const script = /src="(static\/js\/main\.[^"]+\.js)"/.exec(await page.text())?.[1];
    expect(script).toBeDefined();
    const asset = await api.get(`${DASHBOARD}/${script}`, { authorization });
    expect(asset.status).toBe(200);
    expect(asset.headers.get('content-type')).toMatch(/javascript/);
    expect((await asset.arrayBuffer()).byteLength).toBeGreaterThan(0);
    expect((await api.get(`${DASHBOARD}/${script}`)).status).toBe(401);

    // The board sees every queue under this file's prefix: the two cancellation queues and the webhooks queue.
    const queues = await api.get(`${DASHBOARD}/api/queues`, { authorization });
    expect(queues.status).toBe(200);
    const body = (await queues.json()) as { queues: Array<{ name: string }> };
    expect(body.queues.map((queue) => queue.name).sort()).toEqual(['bulk-cancel', 'cancel', 'webhooks']);
  });
});

describe('queue dashboard writes', () => {
  let env: TestEnvironment;
  let api: TestApi;
  let authorization: string;

  beforeAll(async () => {
    env = await createTestEnvironment({ DASHBOARD_WRITE: 'true' });
    api = await startTestApi(env);
    authorization = basic('ops', env.config.ADMIN_TOKEN as string);
  });
  afterAll(async () => {
    await api?.close();
    await env?.close();
  });

  // Removing completed jobs of an empty queue: a write that changes nothing here.
  const cleanCompleted = (headers: Record<string, string>) =>
    fetch(`${api.adminUrl}${DASHBOARD}/api/queues/cancel/clean/completed`, {
      method: 'PUT',
      headers: { authorization, ...headers },
    });

  it('refuses writes that a browser marks as coming from another site', async () => {
    const crossSite: Array<Record<string, string>> = [
      { 'sec-fetch-site': 'cross-site' },
      { 'sec-fetch-site': 'same-site' },
      { origin: 'https://elsewhere.example' },
      { origin: 'null' },
    ];
    for (const headers of crossSite) {
      const response = await cleanCompleted(headers);
      expect(response.status, JSON.stringify(headers)).toBe(403);
      expect(await response.json()).toEqual({ errorCode: 4, errorMessage: 'Cross-site request refused' });
    }
  });

  it('accepts writes from the dashboard page itself and from scripts', async () => {
    const sameOrigin: Array<Record<string, string>> = [
      { 'sec-fetch-site': 'same-origin', origin: api.adminUrl },
      { origin: api.adminUrl },
      {},
    ];
    for (const headers of sameOrigin) {
      const response = await cleanCompleted(headers);
      expect(response.status, JSON.stringify(headers)).toBe(200);
    }
    // Each write is in the audit log, with the operator whose token made it.
    const audit = await env.db
      .selectFrom('admin_audit_log')
      .select(['operator', 'action', 'target'])
      .where('action', '=', 'dashboard.write')
      .execute();
    expect(audit).toEqual(
      sameOrigin.map(() => ({
        operator: 'admin',
        action: 'dashboard.write',
        target: 'PUT /api/queues/cancel/clean/completed',
      })),
    );
  });

  it('counts the merchant listener as another site', async () => {
    const response = await cleanCompleted({ origin: api.baseUrl });
    expect(response.status).toBe(403);
  });

  it('asks for credentials before anything else', async () => {
    const response = await fetch(`${api.adminUrl}${DASHBOARD}/api/queues/cancel/clean/completed`, {
      method: 'PUT',
      headers: { origin: api.adminUrl },
    });
    expect(response.status).toBe(401);
  });
});

describe('queue dashboard read-only (DASHBOARD_WRITE unset)', () => {
  let env: TestEnvironment;
  let api: TestApi;
  let authorization: string;

  beforeAll(async () => {
    env = await createTestEnvironment();
    api = await startTestApi(env);
    authorization = `Bearer ${env.config.ADMIN_TOKEN}`;
  });
  afterAll(async () => {
    await api?.close();
    await env?.close();
  });

  it('is read-only by default', () => {
    expect(env.config.DASHBOARD_WRITE).toBe(false);
  });

  it('refuses every write with 403, changes nothing and records nothing', async () => {
    const job = await api.deps.producer.queues
      .forShard(null)
      .queues.cancel.add('probe', {}, { jobId: 'dashboard-probe', delay: 3_600_000 });
    const writes: Array<[string, string]> = [
      ['PUT', '/api/queues/cancel/clean/completed'],
      ['PUT', `/api/queues/${job.queueName}/${job.id}/promote`],
      ['PUT', `/api/queues/${job.queueName}/${job.id}/clean`],
      ['PUT', `/api/queues/${job.queueName}/pause`],
      ['POST', `/api/queues/${job.queueName}/add`],
      ['DELETE', `/api/queues/${job.queueName}/empty`],
    ];
    for (const [method, path] of writes) {
      const response = await fetch(`${api.adminUrl}${DASHBOARD}${path}`, {
        method,
        headers: { authorization, 'content-type': 'application/json' },
        body: method === 'POST' ? JSON.stringify({ name: 'x', data: {} }) : undefined,
      });
      expect(response.status, `${method} ${path}`).toBe(403);
      expect(await response.json()).toEqual({
        errorCode: 4,
        errorMessage: 'The queue dashboard is read-only (DASHBOARD_WRITE)',
      });
    }
    expect(await job.getState()).toBe('delayed');
    expect(await api.deps.producer.queues.forShard(null).queues.cancel.isPaused()).toBe(false);
    const audit = await env.db.selectFrom('admin_audit_log').selectAll().execute();
    expect(audit).toEqual([]);
  });

  it('tells bull-board its queues are read-only (its UI hides the buttons)', async () => {
    const response = await api.get(`${DASHBOARD}/api/queues`, { authorization });
    expect(response.status).toBe(200);
    const { queues } = (await response.json()) as { queues: Array<{ name: string; readOnlyMode: boolean }> };
    expect(queues.length).toBeGreaterThan(0);
    for (const queue of queues) expect(queue.readOnlyMode, queue.name).toBe(true);
  });
});

describe('queue dashboard without ADMIN_TOKEN', () => {
  let env: TestEnvironment;
  let api: TestApi;

  beforeAll(async () => {
    env = await createTestEnvironment({ ADMIN_TOKEN: '' });
    api = await startTestApi(env);
  });
  afterAll(async () => {
    await api?.close();
    await env?.close();
  });

  it('does not exist: 404 whatever the credentials', async () => {
    expect(env.config.ADMIN_TOKEN).toBeUndefined();
    const attempts: Array<Record<string, string>> = [
      {},
      { authorization: 'Bearer test-admin-token-0123456789abcdef0123' },
      { authorization: basic('a', 'b') },
    ];
    for (const headers of attempts) {
      for (const path of [DASHBOARD, `${DASHBOARD}/api/queues`]) {
        const response = await api.get(path, headers);
        expect(response.status, path).toBe(404);
        expect(response.headers.get('www-authenticate')).toBeNull();
        expect(await response.json()).toEqual({ errorCode: 10, errorMessage: 'Route not found' });
      }
    }
  });
});

describe('queue dashboard before Redis is reached', () => {
  let env: TestEnvironment;
  let api: TestApi;

  beforeAll(async () => {
    env = await createTestEnvironment();
    // Nothing listens on port 1: the producer never builds its queues.
    api = await startTestApi(env, {}, { redisUrl: 'redis://127.0.0.1:1', waitForRedis: false });
  });
  afterAll(async () => {
    await api?.close();
    await env?.close();
  });

  it('still refuses without credentials, and answers 503 to the admin', async () => {
    const refused = await api.get(DASHBOARD);
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toMatch(/^Basic realm="queues"/);

    const response = await api.get(DASHBOARD, { authorization: `Bearer ${env.config.ADMIN_TOKEN}` });
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('1');
    expect(await response.json()).toEqual({ errorCode: 11, errorMessage: 'Service temporarily unavailable' });
  });
});
