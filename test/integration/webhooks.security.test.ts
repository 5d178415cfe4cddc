import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { webhookEventId } from '../../src/shared/webhooks/webhook-catalogue.js';
import { createWebhookNotifier, type WebhookNotifier } from '../../src/shared/webhooks/webhook-notifier.js';
import { createMerchant } from '../helpers/fixtures.js';
import { useTestContext } from '../helpers/test-context.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { eventually } from '../helpers/worker.js';

// The SSRF guard with WEBHOOK_ALLOW_PRIVATE at its default (false): internal addresses are refused when
// the URL is set, and again at delivery time (a URL stored another way, or a name that now resolves
// inside the network, is never POSTed to). Also: the admin token, and the secret shown only once.

/** A response body, loosely typed for assertions. */
const readJson = (response: Response): Promise<any> => response.json();

const { env, api, worker } = useTestContext({ api: true, worker: true });
let notifier: WebhookNotifier;
let receiver: WebhookReceiver;

const adminHeaders = (token = env.config.ADMIN_TOKEN) => ({
  authorization: `Bearer ${token}`,
  'content-type': 'application/json',
});

const putWebhook = (merchantId: string, body: unknown, token?: string) =>
  fetch(`${api.adminUrl}/admin/v1/merchants/${merchantId}/webhook`, {
    method: 'PUT',
    headers: adminHeaders(token),
    body: JSON.stringify(body),
  });

const listDeliveries = (merchantId: string, token?: string) =>
  fetch(`${api.adminUrl}/admin/v1/merchants/${merchantId}/webhook/deliveries`, { headers: adminHeaders(token) });

beforeAll(async () => {
  notifier = createWebhookNotifier({ ...worker.deps, queue: () => worker.deps.queues.webhooks });
  receiver = await startWebhookReceiver();
});
afterAll(async () => {
  await receiver?.close();
});

describe('webhook URLs when private addresses are not allowed (the default)', () => {
  it('is the configuration of these tests', () => {
    expect(env.config.WEBHOOK_ALLOW_PRIVATE).toBe(false);
  });

  it.each([
    'http://127.0.0.1:8080/hooks',
    'http://10.1.2.3/hooks',
    'http://[::1]/hooks',
    'http://169.254.169.254/latest/meta-data/',
    'http://192.168.0.10/',
    'http://172.20.0.1/',
    'http://localhost:3000/',
    'http://[::ffff:127.0.0.1]/',
    'http://[fd00::1]/',
    'http://0.0.0.0/',
    'http://2130706433/',
    'http://[::ffff:0:7f00:1]/',
    'http://[100::1]/',
    'http://[64:ff9b:1::a00:1]/',
    'http://192.0.2.10/',
  ])('refuses %s with 400, and stores nothing', async (url) => {
    const merchant = await createMerchant(env.db);
    const response = await putWebhook(merchant.id, { url });
    expect(response.status).toBe(400);
    expect(await readJson(response)).toEqual({
      errorCode: 1,
      errorMessage: 'url: must not point at a loopback, private, link-local or other internal address',
    });
    const stored = await env.db
      .selectFrom('merchant_webhooks')
      .selectAll()
      .where('merchant_id', '=', merchant.id)
      .execute();
    expect(stored).toEqual([]);
  });

  it.each(['ftp://merchant.example/hooks', 'file:///etc/passwd', 'javascript:alert(1)', 'merchant.example/hooks'])(
    'refuses the non-http URL %s with 400',
    async (url) => {
      const merchant = await createMerchant(env.db);
      const response = await putWebhook(merchant.id, { url });
      expect(response.status).toBe(400);
      expect((await readJson(response)).errorCode).toBe(1);
    },
  );

  it('accepts a public host name (checked again, resolved, at each delivery)', async () => {
    const merchant = await createMerchant(env.db);
    const response = await putWebhook(merchant.id, { url: 'https://merchant.example/hooks' });
    expect(response.status).toBe(200);
  });

  it.each(['127.0.0.1', 'localhost'])(
    'never POSTs to an internal address found at delivery time (%s), and does not retry',
    async (host) => {
      const merchant = await createMerchant(env.db);
      // Stored around the admin API, as a URL whose name later resolves inside the network would be.
      await env.db
        .insertInto('merchant_webhooks')
        .values({
          merchant_id: merchant.id,
          url: `http://${host}:${receiver.port}/internal`,
          events: ['job.completed'],
          secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw/xSAaMzSA1c=',
        })
        .execute();
      const jobId = randomUUID();
      await notifier.jobFinished({
        merchantId: merchant.id,
        type: 'job.completed',
        status: {
          jobId,
          operation: 'cancel',
          state: 'completed',
          createdAt: Date.now(),
          startedAt: Date.now(),
          finishedAt: Date.now(),
          progress: 100,
          result: { requested: 1, cancelled: 1, alreadyCancelled: 0, notCancellable: 0, notFound: 0 },
          error: null,
        },
      });
      const eventId = `msg_${webhookEventId(merchant.id, jobId, 'job.completed')}`;
      const delivery = await eventually(
        async () => {
          const { deliveries } = await readJson(await listDeliveries(merchant.id));
          return deliveries.find(
            (entry: { eventId: string; state: string }) => entry.eventId === eventId && entry.state === 'failed',
          );
        },
        { what: 'refused delivery' },
      );
      expect(delivery).toMatchObject({ attempts: 1, lastStatus: null, nextAttemptAt: null });
      expect(delivery.lastError).toContain('internal address');
      expect(receiver.received).toEqual([]);
    },
  );
});

describe('webhook URLs with user information', () => {
  it.each(['https://u:p@merchant.example/hooks', 'https://token@merchant.example/hooks'])(
    'refuses %s with 400 errorCode 1, and stores nothing',
    async (url) => {
      const merchant = await createMerchant(env.db);
      const response = await putWebhook(merchant.id, { url });
      expect(response.status).toBe(400);
      expect(await readJson(response)).toEqual({
        errorCode: 1,
        errorMessage: expect.stringContaining('url: must not carry user information'),
      });
      const stored = await env.db
        .selectFrom('merchant_webhooks')
        .select('url')
        .where('merchant_id', '=', merchant.id)
        .execute();
      expect(stored).toEqual([]);
    },
  );

  it('never shows a credential or a signing secret in answers or in the audit log', async () => {
    const merchant = await createMerchant(env.db);
    // A URL with credentials stored before they were refused (around the admin API).
    await env.db
      .insertInto('merchant_webhooks')
      .values({
        merchant_id: merchant.id,
        url: 'https://olduser:oldpassword@merchant.example/hooks',
        events: ['job.completed'],
        secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw/xSAaMzSA1c=',
      })
      .execute();
    const shown = await fetch(`${api.adminUrl}/admin/v1/merchants/${merchant.id}/webhook`, { headers: adminHeaders() });
    expect(await readJson(shown)).toMatchObject({ url: 'https://merchant.example/hooks' });

    const put = await putWebhook(merchant.id, { url: 'https://merchant.example/new-hooks' });
    expect(put.status).toBe(200);
    const { secret } = await readJson(put);
    const removed = await fetch(`${api.adminUrl}/admin/v1/merchants/${merchant.id}/webhook`, {
      method: 'DELETE',
      headers: adminHeaders(),
    });
    expect(removed.status).toBe(204);

    const audit = await env.db
      .selectFrom('admin_audit_log')
      .select(['action', 'before', 'after'])
      .where('target', '=', merchant.id)
      .orderBy('id')
      .execute();
    expect(audit).toEqual([
      {
        action: 'webhook.put',
        before: { url: 'https://merchant.example/hooks', events: ['job.completed'] },
        after: { url: 'https://merchant.example/new-hooks', events: expect.any(Array) },
      },
      {
        action: 'webhook.delete',
        before: { url: 'https://merchant.example/new-hooks', events: expect.any(Array) },
        after: null,
      },
    ]);
    const text = JSON.stringify(audit);
    for (const secretText of ['oldpassword', 'olduser', secret, secret.slice('whsec_'.length), 'MfKQ9r8GKYqrTwjUPD8']) {
      expect(text).not.toContain(secretText);
    }
  });

  it('never POSTs to a stored URL with user information', async () => {
    const merchant = await createMerchant(env.db);
    await env.db
      .insertInto('merchant_webhooks')
      .values({
        merchant_id: merchant.id,
        url: 'https://u:p@93.184.216.34/hooks',
        events: ['job.completed'],
        secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw/xSAaMzSA1c=',
      })
      .execute();
    const jobId = randomUUID();
    await notifier.jobFinished({
      merchantId: merchant.id,
      type: 'job.completed',
      status: {
        jobId,
        operation: 'cancel',
        state: 'completed',
        createdAt: Date.now(),
        startedAt: Date.now(),
        finishedAt: Date.now(),
        progress: 100,
        result: { requested: 1, cancelled: 1, alreadyCancelled: 0, notCancellable: 0, notFound: 0 },
        error: null,
      },
    });
    const eventId = `msg_${webhookEventId(merchant.id, jobId, 'job.completed')}`;
    const delivery = await eventually(
      async () => {
        const { deliveries } = await readJson(await listDeliveries(merchant.id));
        return deliveries.find(
          (entry: { eventId: string; state: string }) => entry.eventId === eventId && entry.state === 'failed',
        );
      },
      { what: 'refused delivery' },
    );
    expect(delivery).toMatchObject({ attempts: 1, lastStatus: null, nextAttemptAt: null });
    expect(delivery.lastError).toContain('user information');
  });
});

describe('admin webhook routes', () => {
  it('need the admin token', async () => {
    const merchant = await createMerchant(env.db);
    for (const token of ['wrong-token-0123456789', '']) {
      const put = await putWebhook(merchant.id, { url: 'https://merchant.example/hooks' }, token);
      expect(put.status).toBe(401);
      const list = await listDeliveries(merchant.id, token);
      expect(list.status).toBe(401);
      const removed = await fetch(`${api.adminUrl}/admin/v1/merchants/${merchant.id}/webhook`, {
        method: 'DELETE',
        headers: adminHeaders(token),
      });
      expect(removed.status).toBe(401);
    }
    const stored = await env.db
      .selectFrom('merchant_webhooks')
      .selectAll()
      .where('merchant_id', '=', merchant.id)
      .execute();
    expect(stored).toEqual([]);
  });

  it('show the signing secret only in the PUT answer', async () => {
    const merchant = await createMerchant(env.db);
    const { secret } = await readJson(await putWebhook(merchant.id, { url: 'https://merchant.example/hooks' }));
    expect(secret).toMatch(/^whsec_/);
    const listed = await (await listDeliveries(merchant.id)).text();
    expect(listed).not.toContain(secret);
    expect(listed).not.toContain(secret.slice('whsec_'.length));
  });

  it("never list another merchant's deliveries", async () => {
    const owner = await createMerchant(env.db);
    const other = await createMerchant(env.db);
    await env.db
      .insertInto('webhook_deliveries')
      .values({ id: randomUUID(), merchant_id: owner.id, type: 'job.completed', job_id: 'owners-job', payload: '{}' })
      .execute();
    expect((await readJson(await listDeliveries(owner.id))).deliveries).toHaveLength(1);
    expect(await readJson(await listDeliveries(other.id))).toEqual({ deliveries: [] });
  });
});
