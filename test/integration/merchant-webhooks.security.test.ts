import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { PublicJobStatus } from '../../src/shared/jobs/job-status-schema.js';
import { webhookEventId } from '../../src/shared/webhooks/webhook-catalogue.js';
import { createWebhookNotifier, type WebhookNotifier } from '../../src/shared/webhooks/webhook-notifier.js';
import { startTestApi } from '../helpers/api.js';
import { createTestEnvironment } from '../helpers/environment.js';
import { createMerchant, type MerchantFixture } from '../helpers/fixtures.js';
import { type WebhookRouteName, webhookCall, webhookRouteNames } from '../helpers/merchant-webhook-calls.js';
import { bodyBoundHeaders, signedBody } from '../helpers/signing.js';
import { useTestContext } from '../helpers/test-context.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { eventually } from '../helpers/worker.js';

// Who may do what with a merchant's webhook: only that merchant, signed like every merchant request,
// and nothing secret in any answer but the one that makes the secret.

const { env, api, worker } = useTestContext({
  settings: { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_SCALE: '0.0001' },
  api: true,
  worker: true,
});
let notifier: WebhookNotifier;
let receiver: WebhookReceiver;

const call = (merchant: MerchantFixture, name: WebhookRouteName, fields: Record<string, unknown> = {}) =>
  webhookCall(api.baseUrl, merchant, name, fields);

/** Fields each route needs to get past validation (so a refusal is the gate's, not the body's). */
const validFields: Record<WebhookRouteName, Record<string, unknown>> = {
  get: {},
  put: { url: 'https://merchant.example/hooks' },
  delete: {},
  rotateSecret: {},
  deliveries: {},
  redeliver: { eventId: `msg_${randomUUID()}` },
  recover: { since: 0 },
  test: {},
};

function finished(): PublicJobStatus {
  const now = Date.now();
  return {
    jobId: randomUUID(),
    operation: 'bulkCancel',
    state: 'completed',
    createdAt: now,
    startedAt: now,
    finishedAt: now,
    progress: 100,
    result: { requested: 1, cancelled: 1, alreadyCancelled: 0, notCancellable: 0, notFound: 0 },
    error: null,
  };
}

beforeAll(async () => {
  notifier = createWebhookNotifier({ ...worker.deps, queue: () => worker.deps.queues.webhooks });
  receiver = await startWebhookReceiver();
});
afterAll(async () => {
  await receiver?.close();
});
beforeEach(() => {
  receiver.answer = () => 200;
});

describe('the merchant webhook routes', () => {
  it('refuse a request without a signature (400) or with a wrong one (401), and change nothing', async () => {
    const merchant = await createMerchant(env.db);
    for (const name of webhookRouteNames) {
      const unsigned = await webhookCall(
        api.baseUrl,
        merchant,
        name,
        {},
        {
          body: JSON.stringify({ merchantId: merchant.id, timestamp: Date.now(), ...validFields[name] }),
        },
      );
      expect(unsigned.status, `${name} unsigned`).toBe(400);
      expect(unsigned.body.errorCode).toBe(1);
      const wrong = await webhookCall(
        api.baseUrl,
        { id: merchant.id, secretKey: 'f'.repeat(64) },
        name,
        validFields[name],
      );
      expect(wrong.status, `${name} wrong hash`).toBe(401);
      expect(wrong.body.errorCode).toBe(2);
    }
    expect(
      await env.db.selectFrom('merchant_webhooks').where('merchant_id', '=', merchant.id).selectAll().execute(),
    ).toEqual([]);
  });

  it("refuse another merchant's signature on a merchant's id (wrong merchant): 401", async () => {
    const owner = await createMerchant(env.db);
    const intruder = await createMerchant(env.db);
    for (const name of webhookRouteNames) {
      // The intruder signs with its own secret but names the owner.
      const answer = await webhookCall(
        api.baseUrl,
        { id: owner.id, secretKey: intruder.secretKey },
        name,
        validFields[name],
      );
      expect(answer.status, name).toBe(401);
    }
  });

  it("never show one merchant another's deliveries, nor redeliver them", async () => {
    const owner = await createMerchant(env.db);
    const other = await createMerchant(env.db);
    await call(owner, 'put', { url: `${receiver.url}/owner` });
    await call(other, 'put', { url: `${receiver.url}/other` });
    const status = finished();
    await notifier.jobFinished({ merchantId: owner.id, type: 'job.completed', status });
    const eventId = webhookEventId(owner.id, status.jobId, 'job.completed');
    await eventually(async () => receiver.withId(`msg_${eventId}`)[0], { what: 'owner delivery' });

    const othersLog = await call(other, 'deliveries', { limit: 100 });
    expect(othersLog.status).toBe(200);
    expect(othersLog.body.deliveries).toEqual([]);
    expect((await call(other, 'deliveries', { jobId: status.jobId })).body.deliveries).toEqual([]);

    const stolen = await call(other, 'redeliver', { eventId: `msg_${eventId}` });
    expect(stolen.status).toBe(404);
    expect(stolen.body.errorCode).toBe(10);
    const row = await env.db
      .selectFrom('webhook_deliveries')
      .select('state')
      .where('id', '=', eventId)
      .executeTakeFirstOrThrow();
    expect(row.state).toBe('delivered');
    expect(receiver.withId(`msg_${eventId}`)).toHaveLength(1);
    expect(receiver.received.filter((request) => request.path === '/other')).toHaveLength(0);
  });

  it('never show the secret except in the answer that makes it', async () => {
    const merchant = await createMerchant(env.db);
    const set = await call(merchant, 'put', { url: `${receiver.url}/quiet` });
    const rotated = await call(merchant, 'rotateSecret');
    const secrets = [set.body.secret, rotated.body.secret].map((secret: string) => secret.slice('whsec_'.length));
    await call(merchant, 'test');
    for (const name of ['get', 'deliveries'] as const) {
      const answer = await call(merchant, name);
      expect(answer.status).toBe(200);
      for (const secret of secrets) expect(answer.text).not.toContain(secret);
    }
    const audit = await env.db.selectFrom('admin_audit_log').selectAll().where('target', '=', merchant.id).execute();
    for (const secret of secrets) expect(JSON.stringify(audit)).not.toContain(secret);
  });

  it('take signature version 2 (X-Signature over the body), and refuse version 1 from a merchant that requires 2 on writes', async () => {
    const merchant = await createMerchant(env.db, { signatureVersion: 2, requireSignatureV2: true });
    const path = '/api/v1/integration/webhooks/put';
    const body = JSON.stringify(signedBody(merchant, { url: `${receiver.url}/v2` }));
    const signed = await webhookCall(
      api.baseUrl,
      merchant,
      'put',
      {},
      {
        body,
        headers: bodyBoundHeaders(merchant, { method: 'POST', pathWithQuery: path, body }),
      },
    );
    expect(signed.status, signed.text).toBe(200);
    const v1 = await webhookCall(api.baseUrl, merchant, 'put', {}, { body });
    expect(v1.status).toBe(401);
  });

  it('refuse an internal address by the same rules as the admin route when private addresses are not allowed', async () => {
    const strict = await createTestEnvironment();
    const strictApi = await startTestApi(strict);
    try {
      const merchant = await createMerchant(strict.db);
      for (const url of [
        'http://127.0.0.1:8080/hooks',
        'http://10.0.0.5/hooks',
        'https://user:pass@merchant.example/hooks',
      ]) {
        const answer = await webhookCall(strictApi.baseUrl, merchant, 'put', { url });
        expect(answer.status, url).toBe(400);
        expect(answer.body.errorCode).toBe(1);
        expect(answer.text).not.toContain('pass@');
        // The admin route calls the same code.
        const admin = await fetch(`${strictApi.adminUrl}/admin/v1/merchants/${merchant.id}/webhook`, {
          method: 'PUT',
          headers: { authorization: `Bearer ${strict.config.ADMIN_TOKEN}`, 'content-type': 'application/json' },
          body: JSON.stringify({ url }),
        });
        expect(admin.status, `admin ${url}`).toBe(400);
      }
    } finally {
      await strictApi.close();
      await strict.close();
    }
  });
});
