import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createMerchant, type MerchantFixture } from '../helpers/fixtures.js';
import { type WebhookRouteName, webhookCall } from '../helpers/merchant-webhook-calls.js';
import { useTestContext } from '../helpers/test-context.js';

// The merchant webhook routes' refusals: bad input (400), no endpoint (409), unknown events (404) and the
// per-merchant bounds (429 with Retry-After). No worker runs: nothing queued here is sent.

const { env, api } = useTestContext({
  settings: { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_MANUAL_SENDS_PER_MINUTE: '3' },
  api: true,
});

const call = (merchant: MerchantFixture, name: WebhookRouteName, fields: Record<string, unknown> = {}) =>
  webhookCall(api.baseUrl, merchant, name, fields);

describe('merchant webhook routes refuse', () => {
  it('bad input with 400 errorCode 1', async () => {
    const merchant = await createMerchant(env.db);
    await call(merchant, 'put', { url: 'http://127.0.0.1:9/hooks' });
    const cases: Array<[WebhookRouteName, Record<string, unknown>]> = [
      ['put', {}],
      ['put', { url: 'ftp://merchant.example/hooks' }],
      ['put', { url: 'https://merchant.example/hooks', events: [] }],
      ['put', { url: 'https://merchant.example/hooks', events: ['webhook.test'] }],
      ['put', { url: 'https://merchant.example/hooks', events: ['job.failed', 'job.failed'] }],
      ['deliveries', { limit: 0 }],
      ['deliveries', { limit: 101 }],
      ['deliveries', { status: 'lost' }],
      ['deliveries', { after: 'not-a-cursor' }],
      ['redeliver', {}],
      ['redeliver', { eventId: 'msg_not-a-uuid' }],
      ['recover', {}],
      ['recover', { since: 'yesterday' }],
      ['recover', { since: -1 }],
      ['recover', { since: Number.MAX_SAFE_INTEGER + 2 }],
    ];
    for (const [name, fields] of cases) {
      const answer = await call(merchant, name, fields);
      expect(answer.status, `${name} ${JSON.stringify(fields)}: ${answer.text}`).toBe(400);
      expect(answer.body.errorCode).toBe(1);
    }
  });

  it('sends and rotations with 409 while no endpoint is set', async () => {
    const merchant = await createMerchant(env.db);
    for (const [name, fields] of [
      ['test', {}],
      ['redeliver', { eventId: `msg_${randomUUID()}` }],
      ['recover', { since: 0 }],
      ['rotateSecret', {}],
    ] as Array<[WebhookRouteName, Record<string, unknown>]>) {
      const answer = await call(merchant, name, fields);
      expect(answer.status, name).toBe(409);
      expect(answer.body.errorCode).toBe(13);
    }
    expect((await call(merchant, 'get')).status).toBe(404);
  });

  it('an unknown event id with 404', async () => {
    const merchant = await createMerchant(env.db);
    await call(merchant, 'put', { url: 'http://127.0.0.1:9/hooks' });
    const answer = await call(merchant, 'redeliver', { eventId: randomUUID() });
    expect(answer.status).toBe(404);
    expect(answer.body.errorCode).toBe(10);
  });

  it('sends on request past WEBHOOK_MANUAL_SENDS_PER_MINUTE with 429 errorCode 7 and Retry-After', async () => {
    const merchant = await createMerchant(env.db);
    await call(merchant, 'put', { url: 'http://127.0.0.1:9/hooks' });
    const answers = [];
    for (let index = 0; index < 4; index++) answers.push(await call(merchant, 'test'));
    // Unless the minute turned between them, the fourth is refused.
    const refused = answers.filter((answer) => answer.status === 429);
    expect(answers.filter((answer) => answer.status === 200).length).toBeGreaterThanOrEqual(3);
    if (refused.length === 0) {
      expect((await call(merchant, 'test')).status).toBe(200);
      return;
    }
    const [first] = refused as [(typeof answers)[number]];
    expect(first.body.errorCode).toBe(7);
    const retryAfter = Number(first.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    // Another merchant is not held by it.
    const other = await createMerchant(env.db);
    await call(other, 'put', { url: 'http://127.0.0.1:9/hooks' });
    expect((await call(other, 'test')).status).toBe(200);
  });

  it('a second recovery while one runs with 429 errorCode 7', async () => {
    const merchant = await createMerchant(env.db);
    await call(merchant, 'put', { url: 'http://127.0.0.1:9/hooks' });
    await env.db
      .insertInto('webhook_deliveries')
      .values({
        id: randomUUID(),
        merchant_id: merchant.id,
        type: 'job.completed',
        job_id: 'j',
        payload: '{}',
        state: 'failed',
      })
      .execute();
    const first = await call(merchant, 'recover', { since: 0 });
    expect(first.status).toBe(200);
    expect(first.body.events).toBe(1);
    // No worker runs here: the first recovery is still waiting.
    const second = await call(merchant, 'recover', { since: 0 });
    expect(second.status).toBe(429);
    expect(second.body.errorCode).toBe(7);
    expect(Number(second.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});
