import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { useTestContext } from '../helpers/test-context.js';

const aliceToken = randomBytes(32).toString('hex');
const bobToken = randomBytes(32).toString('hex');

const { env, api } = useTestContext({ settings: { ADMIN_TOKENS: `alice:${aliceToken}, bob:${bobToken}` }, api: true });

type JsonResponse = Omit<Response, 'json'> & { json(): Promise<any> };

function admin(token: string, method: string, path: string, body?: unknown): Promise<JsonResponse> {
  return fetch(`${api.adminUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

async function createMerchant(token: string, name: string): Promise<{ id: string; secretKey: string }> {
  const response = await admin(token, 'POST', '/admin/v1/merchants', { name });
  expect(response.status).toBe(201);
  return response.json();
}

describe('operators', () => {
  it('are every ADMIN_TOKENS entry plus ADMIN_TOKEN as "admin", each let in by its own token', async () => {
    for (const token of [aliceToken, bobToken, env.config.ADMIN_TOKEN as string]) {
      expect((await admin(token, 'GET', '/admin/v1/audit')).status).toBe(200);
    }
    expect((await admin(`${aliceToken}0`, 'GET', '/admin/v1/audit')).status).toBe(401);
  });
});

describe('the audit log', () => {
  it('records an admin PATCH with its operator name, the settings before and after, in the same transaction', async () => {
    const merchant = await createMerchant(aliceToken, 'Audited');
    const response = await admin(bobToken, 'PATCH', `/admin/v1/merchants/${merchant.id}`, {
      status: 'DISABLED',
      rateLimitPerSecond: 50,
    });
    expect(response.status).toBe(200);
    const requestId = response.headers.get('x-request-id');

    const page = await (await admin(aliceToken, 'GET', '/admin/v1/audit?limit=10')).json();
    const entries = page.entries.filter((entry: { target: string }) => entry.target === merchant.id);
    expect(entries.map((entry: { action: string; operator: string }) => [entry.action, entry.operator])).toEqual([
      ['merchant.update', 'bob'],
      ['merchant.create', 'alice'],
    ]);
    const patch = entries[0];
    expect(patch.requestId).toBe(requestId);
    expect(patch.before).toEqual({
      status: 'ACTIVE',
      allowedIps: null,
      maxQueuedJobs: null,
      rateLimitPerSecond: null,
      signatureVersion: 1,
    });
    expect(patch.after).toEqual({ ...patch.before, status: 'DISABLED', rateLimitPerSecond: 50 });
    expect(Math.abs(patch.at - Date.now())).toBeLessThan(60_000);

    // The row and the change are one: the audit row's time is the merchant's updated_at (one transaction's now()).
    const row = await env.db
      .selectFrom('merchants')
      .select('updated_at')
      .where('id', '=', merchant.id)
      .executeTakeFirstOrThrow();
    expect(patch.at).toBe(row.updated_at.getTime());
  });

  it('records no secret: rotations and webhooks appear, their secrets do not', async () => {
    const merchant = await createMerchant(aliceToken, 'Secretive');
    const rotated = await admin(bobToken, 'POST', `/admin/v1/merchants/${merchant.id}/secret-rotations`, {});
    expect(rotated.status).toBe(201);
    const { secretKey } = await rotated.json();
    const webhook = await admin(bobToken, 'PUT', `/admin/v1/merchants/${merchant.id}/webhook`, {
      url: 'https://merchant.example/hooks',
    });
    expect(webhook.status).toBe(200);
    const { secret } = await webhook.json();

    const rows = await env.db.selectFrom('admin_audit_log').selectAll().where('target', '=', merchant.id).execute();
    expect(rows.map((row) => row.action).sort()).toEqual(['merchant.create', 'merchant.secret.rotate', 'webhook.put']);
    const text = JSON.stringify(rows);
    for (const value of [merchant.secretKey, secretKey, secret]) expect(text).not.toContain(value);
    expect(rows.find((row) => row.action === 'webhook.put')?.after).toEqual({
      url: 'https://merchant.example/hooks',
      events: expect.any(Array),
    });
  });

  it('lists every entry once, newest first, in keyset pages', async () => {
    for (let index = 0; index < 5; index += 1) await createMerchant(aliceToken, `Paged ${index}`);
    const all = await env.db.selectFrom('admin_audit_log').select('id').orderBy('id', 'desc').execute();
    expect(all.length).toBeGreaterThanOrEqual(7);

    const seen: string[] = [];
    let cursor: string | null = null;
    for (let pages = 0; pages < 100; pages += 1) {
      const query: string = cursor === null ? '?limit=2' : `?limit=2&cursor=${cursor}`;
      const response = await admin(bobToken, 'GET', `/admin/v1/audit${query}`);
      expect(response.status).toBe(200);
      const page = await response.json();
      expect(page.entries.length).toBeLessThanOrEqual(2);
      seen.push(...page.entries.map((entry: { id: string }) => entry.id));
      cursor = page.nextCursor;
      if (cursor === null) break;
    }
    expect(seen).toEqual(all.map((row) => String(row.id)));
  });
});
