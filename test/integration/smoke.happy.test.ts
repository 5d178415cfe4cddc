import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../helpers/api.js';
import { createTestEnvironment, type TestEnvironment } from '../helpers/environment.js';

let env: TestEnvironment;
let api: TestApi;

beforeAll(async () => {
  env = await createTestEnvironment();
  api = await startTestApi(env);
});
afterAll(async () => {
  await api?.close();
  await env?.close();
});

describe('operations endpoints', () => {
  it('answers /healthz and /readyz with a request id', async () => {
    const health = await api.get('/healthz');
    expect(health.status).toBe(200);
    expect(health.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const ready = await api.get('/readyz');
    expect(await ready.json()).toEqual({ status: 'ok', checks: { postgres: 'ok', redis: 'ok' } });
  });
});
