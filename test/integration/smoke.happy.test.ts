import { describe, expect, it } from 'vitest';
import { useTestContext } from '../helpers/test-context.js';

const { api } = useTestContext({ api: true });

describe('operations endpoints', () => {
  it('answers /healthz and /readyz with a request id', async () => {
    const health = await api.get('/healthz');
    expect(health.status).toBe(200);
    expect(health.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const ready = await api.get('/readyz');
    expect(await ready.json()).toEqual({ status: 'ok', checks: { postgres: 'ok', redis: 'ok' } });
  });
});
