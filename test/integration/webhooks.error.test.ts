import { describe, expect, it } from 'vitest';
import { createMerchant } from '../helpers/fixtures.js';
import { useTestContext } from '../helpers/test-context.js';

/** A response body, loosely typed for assertions. */
const readJson = (response: Response): Promise<any> => response.json();

const { env, api } = useTestContext({ api: true });

const UNKNOWN_MERCHANT = '11111111-2222-4333-8444-555555555555';

function call(method: string, path: string, body?: unknown, rawBody?: string) {
  return fetch(`${api.adminUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${env.config.ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: rawBody ?? (body === undefined ? undefined : JSON.stringify(body)),
  });
}

describe('PUT /admin/v1/merchants/:merchantId/webhook', () => {
  it.each([
    ['no url', {}, 'url'],
    ['a url that is not a string', { url: 42 }, 'url'],
    ['an empty url', { url: '' }, 'url'],
    ['a url over 2,048 characters', { url: `https://merchant.example/${'a'.repeat(2_048)}` }, 'url'],
    ['an unknown event type', { url: 'https://merchant.example/', events: ['job.started'] }, 'events[0]'],
    ['no event type', { url: 'https://merchant.example/', events: [] }, 'events'],
    ['an event type twice', { url: 'https://merchant.example/', events: ['job.failed', 'job.failed'] }, 'events'],
    ['an unknown field', { url: 'https://merchant.example/', secret: 'whsec_mine' }, ''],
  ])('refuses %s with 400 errorCode 1', async (_what, body, field) => {
    const merchant = await createMerchant(env.db);
    const response = await call('PUT', `/admin/v1/merchants/${merchant.id}/webhook`, body);
    expect(response.status).toBe(400);
    const answer = await readJson(response);
    expect(answer.errorCode).toBe(1);
    if (field) expect(answer.errorMessage.startsWith(`${field}: `)).toBe(true);
    const stored = await env.db
      .selectFrom('merchant_webhooks')
      .selectAll()
      .where('merchant_id', '=', merchant.id)
      .execute();
    expect(stored).toEqual([]);
  });

  it('refuses malformed JSON', async () => {
    const merchant = await createMerchant(env.db);
    const response = await call('PUT', `/admin/v1/merchants/${merchant.id}/webhook`, undefined, '{"url":');
    expect(response.status).toBe(400);
    expect((await readJson(response)).errorCode).toBe(1);
  });

  it('refuses a fragment in the URL', async () => {
    const merchant = await createMerchant(env.db);
    const response = await call('PUT', `/admin/v1/merchants/${merchant.id}/webhook`, {
      url: 'https://merchant.example/hooks#part',
    });
    expect(await readJson(response)).toEqual({ errorCode: 1, errorMessage: 'url: must not have a fragment' });
  });
});

describe('every webhook route', () => {
  const routes: ReadonlyArray<[string, string, unknown?]> = [
    ['PUT', 'webhook', { url: 'https://merchant.example/hooks' }],
    ['DELETE', 'webhook'],
    ['GET', 'webhook/deliveries'],
  ];

  it.each(routes)('%s %s answers 404 for an unknown merchant', async (method, path, body) => {
    const response = await call(method, `/admin/v1/merchants/${UNKNOWN_MERCHANT}/${path}`, body);
    expect(response.status).toBe(404);
    expect(await readJson(response)).toEqual({ errorCode: 10, errorMessage: 'Merchant not found' });
  });

  it.each(routes)('%s %s answers 400 for a merchantId that is not a UUID', async (method, path, body) => {
    const response = await call(method, `/admin/v1/merchants/not-a-uuid/${path}`, body);
    expect(response.status).toBe(400);
    expect((await readJson(response)).errorCode).toBe(1);
  });
});
