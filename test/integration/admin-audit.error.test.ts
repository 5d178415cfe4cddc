import { describe, expect, it } from 'vitest';
import { useTestContext } from '../helpers/test-context.js';

const { env, api } = useTestContext({ api: true });

const audit = (query: string) =>
  fetch(`${api.adminUrl}/admin/v1/audit${query}`, { headers: { authorization: `Bearer ${env.config.ADMIN_TOKEN}` } });

describe('GET /admin/v1/audit', () => {
  it.each([
    ['?limit=0', /limit/],
    ['?limit=1001', /limit/],
    ['?limit=ten', /limit/],
    ['?cursor=abc', /cursor/],
    ['?cursor=-1', /cursor/],
    ['?cursor=0', /cursor/],
  ])('refuses %s with 400 naming the parameter', async (query, field) => {
    const response = await audit(query);
    expect(response.status).toBe(400);
    const body = (await response.json()) as { errorCode: number; errorMessage: string };
    expect(body.errorCode).toBe(1);
    expect(body.errorMessage).toMatch(field);
  });

  it('answers an empty last page past the oldest entry', async () => {
    const response = await audit('?cursor=1');
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ entries: [], nextCursor: null });
  });

  it('records nothing for a write that failed', async () => {
    const response = await fetch(`${api.adminUrl}/admin/v1/merchants/8f2a1b4e-3c5d-4e6f-8a9b-0c1d2e3f4a5b`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${env.config.ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ status: 'DISABLED' }),
    });
    expect(response.status).toBe(404);
    expect(await env.db.selectFrom('admin_audit_log').selectAll().execute()).toEqual([]);
  });
});
