import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { PublicJobStatus } from '../../src/shared/jobs/job-status-schema.js';
import { webhookEventId } from '../../src/shared/webhooks/webhook-catalogue.js';
import { createWebhookNotifier, type WebhookNotifier } from '../../src/shared/webhooks/webhook-notifier.js';
import { createMerchant, type MerchantFixture } from '../helpers/fixtures.js';
import { type WebhookRouteName, webhookCall } from '../helpers/merchant-webhook-calls.js';
import { useTestContext } from '../helpers/test-context.js';
import { type ReceivedWebhook, startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { eventually } from '../helpers/worker.js';

// A merchant serving itself through the signed merchant API, end to end in one process: the API, the
// real delivery worker and a real HTTP receiver on 127.0.0.1 (WEBHOOK_ALLOW_PRIVATE), every delivery
// verified with the standardwebhooks package. Retries shrunk 10,000 times (WEBHOOK_RETRY_SCALE).

const { env, api, worker } = useTestContext({
  settings: {
    WEBHOOK_ALLOW_PRIVATE: 'true',
    WEBHOOK_RETRY_SCALE: '0.0001',
    WEBHOOK_TIMEOUT_MS: '1500',
  },
  api: true,
  worker: true,
});
let notifier: WebhookNotifier;
let receiver: WebhookReceiver;

const DAY_MS = 24 * 60 * 60 * 1000;

const call = (merchant: MerchantFixture, name: WebhookRouteName, fields: Record<string, unknown> = {}) =>
  webhookCall(api.baseUrl, merchant, name, fields);

async function ok(merchant: MerchantFixture, name: WebhookRouteName, fields: Record<string, unknown> = {}) {
  const answer = await call(merchant, name, fields);
  expect(answer.status, `${name}: ${answer.text}`).toBe(200);
  return answer.body;
}

function jobStatus(state: PublicJobStatus['state'] = 'completed'): PublicJobStatus {
  const now = Date.now();
  return {
    jobId: randomUUID(),
    operation: 'bulkCancel',
    state,
    createdAt: now - 2_000,
    startedAt: now - 1_000,
    finishedAt: now,
    progress: 100,
    result: { requested: 1, cancelled: 1, alreadyCancelled: 0, notCancellable: 0, notFound: 0 },
    error: null,
  };
}

/** The merchant's delivery of this event once `accept` holds for it (read through webhooks/deliveries). */
function deliveryOf(merchant: MerchantFixture, eventId: string, accept: (delivery: any) => boolean) {
  return eventually(
    async () => {
      const { deliveries } = await ok(merchant, 'deliveries', { limit: 100 });
      return deliveries.find((entry: any) => entry.eventId === `msg_${eventId}` && accept(entry));
    },
    { what: `delivery ${eventId}` },
  );
}

const headersOf = (request: ReceivedWebhook) => request.headers as Record<string, string>;

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

describe('a merchant manages its own webhook endpoint', () => {
  it('sets, reads and removes its endpoint; the secret is shown only by put; each change is audited as the merchant', async () => {
    const merchant = await createMerchant(env.db);
    const set = await ok(merchant, 'put', { url: `${receiver.url}/own`, events: ['job.completed'] });
    expect(set).toEqual({
      url: `${receiver.url}/own`,
      events: ['job.completed'],
      secret: expect.stringMatching(/^whsec_/),
    });

    const read = await call(merchant, 'get');
    expect(read.body).toEqual({
      url: `${receiver.url}/own`,
      events: ['job.completed'],
      enabled: true,
      failingSince: null,
      disabledAt: null,
      disabledReason: null,
    });
    expect(read.text).not.toContain(set.secret.slice('whsec_'.length));

    expect(await ok(merchant, 'delete')).toEqual({ removed: true });
    expect(await ok(merchant, 'delete')).toEqual({ removed: false });
    expect((await call(merchant, 'get')).status).toBe(404);

    const audit = await env.db
      .selectFrom('admin_audit_log')
      .select(['operator', 'action', 'target', 'after'])
      .where('target', '=', merchant.id)
      .orderBy('id')
      .execute();
    expect(audit.map((row) => [row.operator, row.action])).toEqual([
      [`merchant:${merchant.id}`, 'webhook.put'],
      [`merchant:${merchant.id}`, 'webhook.delete'],
    ]);
    expect(JSON.stringify(audit)).not.toContain(set.secret.slice('whsec_'.length));
  });

  it('rotates its secret: during the overlap a delivery verifies with the new secret and with the previous one', async () => {
    const merchant = await createMerchant(env.db);
    const { secret: previous } = await ok(merchant, 'put', { url: `${receiver.url}/rotating` });
    const rotated = await ok(merchant, 'rotateSecret');
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(previous);
    expect(rotated.previousSecretExpiresAt).toBeGreaterThan(Date.now() + DAY_MS - 60_000);
    expect(rotated.previousSecretExpiresAt).toBeLessThanOrEqual(Date.now() + DAY_MS);

    const status = jobStatus();
    await notifier.jobFinished({ merchantId: merchant.id, type: 'job.completed', status });
    const eventId = webhookEventId(merchant.id, status.jobId, 'job.completed');
    await deliveryOf(merchant, eventId, (entry) => entry.state === 'delivered');
    const [request] = receiver.withId(`msg_${eventId}`) as [ReceivedWebhook];
    expect(headersOf(request)['webhook-signature']?.split(' ')).toHaveLength(2);
    for (const secret of [rotated.secret, previous]) {
      expect(new Webhook(secret).verify(request.body, headersOf(request))).toMatchObject({
        data: { jobId: status.jobId },
      });
    }
    const audit = await env.db
      .selectFrom('admin_audit_log')
      .select(['operator', 'action'])
      .where('target', '=', merchant.id)
      .where('action', '=', 'webhook.secret.rotate')
      .execute();
    expect(audit).toEqual([{ operator: `merchant:${merchant.id}`, action: 'webhook.secret.rotate' }]);

    // Once the overlap has ended, only the new secret signs.
    await env.db
      .updateTable('merchant_webhooks')
      .set({ previous_secret_expires_at: new Date(Date.now() - 1) })
      .where('merchant_id', '=', merchant.id)
      .execute();
    const later = jobStatus();
    await notifier.jobFinished({ merchantId: merchant.id, type: 'job.completed', status: later });
    const laterId = webhookEventId(merchant.id, later.jobId, 'job.completed');
    await deliveryOf(merchant, laterId, (entry) => entry.state === 'delivered');
    const [after] = receiver.withId(`msg_${laterId}`) as [ReceivedWebhook];
    expect(new Webhook(rotated.secret).verify(after.body, headersOf(after))).toBeTruthy();
    expect(() => new Webhook(previous).verify(after.body, headersOf(after))).toThrow();
  });
});

describe('a merchant reads its delivery log and sends events again', () => {
  it('sees a failed delivery with each attempt, then redelivers it with the same webhook-id', async () => {
    const merchant = await createMerchant(env.db);
    const { secret } = await ok(merchant, 'put', { url: `${receiver.url}/failing` });
    receiver.answer = (request) => (request.path === '/failing' ? 500 : 200);

    const status = jobStatus('failed');
    await notifier.jobFinished({ merchantId: merchant.id, type: 'job.failed', status });
    const eventId = webhookEventId(merchant.id, status.jobId, 'job.failed');
    const failed = await deliveryOf(merchant, eventId, (entry) => entry.state === 'failed');
    expect(failed).toMatchObject({ type: 'job.failed', jobId: status.jobId, lastError: 'HTTP 500', deliveredAt: null });
    expect(failed.attempts).toHaveLength(7);
    for (const attempt of failed.attempts) {
      expect(attempt).toEqual({ at: expect.any(Number), status: 500, durationMs: expect.any(Number), error: null });
      expect(attempt.durationMs).toBeGreaterThanOrEqual(0);
      expect(attempt.durationMs).toBeLessThan(1_500);
    }
    const times = failed.attempts.map((attempt: any) => attempt.at);
    expect([...times].sort((a, b) => a - b)).toEqual(times);
    // Filters: by state, by type, by job.
    expect((await ok(merchant, 'deliveries', { status: 'failed' })).deliveries).toHaveLength(1);
    expect((await ok(merchant, 'deliveries', { status: 'delivered' })).deliveries).toHaveLength(0);
    expect((await ok(merchant, 'deliveries', { type: 'job.completed' })).deliveries).toHaveLength(0);
    expect((await ok(merchant, 'deliveries', { jobId: status.jobId })).deliveries).toHaveLength(1);

    receiver.answer = () => 200;
    expect(await ok(merchant, 'redeliver', { eventId: `msg_${eventId}` })).toEqual({ eventId: `msg_${eventId}` });
    const delivered = await deliveryOf(merchant, eventId, (entry) => entry.state === 'delivered');
    expect(delivered.attempts).toHaveLength(8);
    expect(delivered.attempts.at(-1)).toMatchObject({ status: 200, error: null });
    const requests = receiver.withId(`msg_${eventId}`);
    expect(requests).toHaveLength(8);
    const last = requests.at(-1) as ReceivedWebhook;
    expect(last.body).toBe(requests[0]?.body);
    expect(new Webhook(secret).verify(last.body, headersOf(last))).toMatchObject({ type: 'job.failed' });
    const row = await env.db
      .selectFrom('webhook_deliveries')
      .select('attempts')
      .where('id', '=', eventId)
      .executeTakeFirstOrThrow();
    expect(row.attempts).toBe(8);
  });

  it('recovers a day of events after re-enabling: those dropped while disabled are delivered, older ones are not', async () => {
    const merchant = await createMerchant(env.db);
    const { secret: first } = await ok(merchant, 'put', { url: `${receiver.url}/recovering` });
    // The endpoint disabled for failing, as the delivery worker leaves it.
    await env.db
      .updateTable('merchant_webhooks')
      .set({ disabled_at: new Date(), disabled_reason: 'every delivery failed since then', failing_since: new Date() })
      .where('merchant_id', '=', merchant.id)
      .execute();
    expect((await ok(merchant, 'get')).enabled).toBe(false);

    const missed = [jobStatus(), jobStatus('failed'), jobStatus('cancelled')];
    const types = ['job.completed', 'job.failed', 'job.cancelled'] as const;
    for (const [index, status] of missed.entries()) {
      await notifier.jobFinished({ merchantId: merchant.id, type: types[index] as (typeof types)[number], status });
    }
    const missedIds = missed.map((status, index) =>
      webhookEventId(merchant.id, status.jobId, types[index] as (typeof types)[number]),
    );
    const old = jobStatus();
    await notifier.jobFinished({ merchantId: merchant.id, type: 'job.completed', status: old });
    const oldId = webhookEventId(merchant.id, old.jobId, 'job.completed');
    // Two days old: outside the day the merchant recovers.
    await sql`UPDATE webhook_deliveries SET created_at = now() - interval '2 days' WHERE id = ${oldId}::uuid`.execute(
      env.db,
    );

    const { deliveries } = await ok(merchant, 'deliveries', { status: 'dropped' });
    expect(deliveries.map((entry: any) => entry.eventId).sort()).toEqual(
      [...missedIds, oldId].map((id) => `msg_${id}`).sort(),
    );
    expect(receiver.received.filter((request) => request.path === '/recovering')).toHaveLength(0);
    // Disabled: nothing can be sent yet.
    expect((await call(merchant, 'recover', { since: Date.now() - DAY_MS })).status).toBe(409);

    const { secret } = await ok(merchant, 'put', { url: `${receiver.url}/recovering` });
    expect(secret).not.toBe(first);
    const recovery = await ok(merchant, 'recover', { since: Date.now() - DAY_MS });
    expect(recovery.events).toBe(3);

    for (const id of missedIds) await deliveryOf(merchant, id, (entry) => entry.state === 'delivered');
    for (const id of missedIds) {
      const [request] = receiver.withId(`msg_${id}`) as [ReceivedWebhook];
      expect(new Webhook(secret).verify(request.body, headersOf(request))).toBeTruthy();
    }
    expect(receiver.withId(`msg_${oldId}`)).toHaveLength(0);
    const oldRow = await env.db
      .selectFrom('webhook_deliveries')
      .select('state')
      .where('id', '=', oldId)
      .executeTakeFirstOrThrow();
    expect(oldRow.state).toBe('dropped');
  });

  it('receives a test event, signed and listed in the log', async () => {
    const merchant = await createMerchant(env.db);
    // Subscribed to one job event only: the test event is sent all the same.
    const { secret } = await ok(merchant, 'put', { url: `${receiver.url}/testing`, events: ['job.failed'] });
    const { eventId } = await ok(merchant, 'test');
    expect(eventId).toMatch(/^msg_[0-9a-f-]{36}$/);
    await eventually(async () => receiver.withId(eventId)[0], { what: 'test event' });
    const [request] = receiver.withId(eventId) as [ReceivedWebhook];
    expect(new Webhook(secret).verify(request.body, headersOf(request))).toEqual({
      type: 'webhook.test',
      timestamp: expect.any(String),
      data: { merchantId: merchant.id, message: expect.any(String) },
    });
    const delivered = await deliveryOf(merchant, eventId.slice('msg_'.length), (entry) => entry.state === 'delivered');
    expect(delivered).toMatchObject({ type: 'webhook.test', jobId: null });
  });

  it('pages the log newest first with a cursor, each delivery exactly once', async () => {
    const merchant = await createMerchant(env.db);
    await ok(merchant, 'put', { url: `${receiver.url}/paged` });
    const ids: string[] = [];
    for (let index = 0; index < 5; index++) {
      const status = jobStatus();
      await notifier.jobFinished({ merchantId: merchant.id, type: 'job.completed', status });
      ids.push(`msg_${webhookEventId(merchant.id, status.jobId, 'job.completed')}`);
    }
    await eventually(
      async () => ((await ok(merchant, 'deliveries', { limit: 100 })).deliveries.length === 5 ? true : undefined),
      {
        what: 'five deliveries',
      },
    );
    const seen: string[] = [];
    let after: string | undefined;
    let pages = 0;
    do {
      const page = await ok(merchant, 'deliveries', { limit: 2, ...(after ? { after } : {}) });
      seen.push(...page.deliveries.map((entry: any) => entry.eventId));
      after = page.next ?? undefined;
      pages++;
    } while (after);
    expect(pages).toBe(3);
    expect(seen).toHaveLength(5);
    expect(new Set(seen)).toEqual(new Set(ids));
    const created = await env.db
      .selectFrom('webhook_deliveries')
      .select(['id', 'created_at'])
      .where('merchant_id', '=', merchant.id)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .execute();
    expect(seen).toEqual(created.map((row) => `msg_${row.id}`));
  });
});
