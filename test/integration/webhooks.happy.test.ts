import { randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { PublicJobStatus } from '../../src/shared/jobs/job-status-schema.js';
import { webhookEventId, webhookQueueName } from '../../src/shared/webhooks/webhook-catalogue.js';
import { createWebhookNotifier, type WebhookNotifier } from '../../src/shared/webhooks/webhook-notifier.js';
import { createMerchant, type MerchantFixture } from '../helpers/fixtures.js';
import { useTestContext } from '../helpers/test-context.js';
import { type ReceivedWebhook, startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { eventually } from '../helpers/worker.js';

// Completion webhooks end to end inside one process: the admin API sets them, the notifier (which the
// worker calls when a job finishes) queues events, the real delivery worker POSTs them to a real HTTP
// receiver on 127.0.0.1 (allowed here by WEBHOOK_ALLOW_PRIVATE), and every signature is checked with the
// standardwebhooks package, the format's reference implementation. The retry schedule is shrunk
// 10,000 times (WEBHOOK_RETRY_SCALE): 0.5 ms, 30 ms, 180 ms, 0.7 s, 1.8 s, 3.6 s.

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
let webhookQueue: Queue;

type Json = any;

interface Delivery {
  eventId: string;
  type: string;
  jobId: string;
  state: string;
  attempts: number;
  lastStatus: number | null;
  lastError: string | null;
  nextAttemptAt: number | null;
  deliveredAt: number | null;
  createdAt: number;
}

const adminHeaders = () => ({
  authorization: `Bearer ${env.config.ADMIN_TOKEN}`,
  'content-type': 'application/json',
});

async function setWebhook(merchantId: string, body: Json): Promise<{ url: string; events: string[]; secret: string }> {
  const response = await fetch(`${api.adminUrl}/admin/v1/merchants/${merchantId}/webhook`, {
    method: 'PUT',
    headers: adminHeaders(),
    body: JSON.stringify(body),
  });
  expect(response.status).toBe(200);
  return (await response.json()) as Json;
}

async function deliveries(merchantId: string): Promise<Delivery[]> {
  const response = await fetch(`${api.adminUrl}/admin/v1/merchants/${merchantId}/webhook/deliveries`, {
    headers: adminHeaders(),
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { deliveries: Delivery[] }).deliveries;
}

/** Waits until the merchant's delivery of this event has reached `state`. */
function settled(merchantId: string, eventId: string, state: 'delivered' | 'failed'): Promise<Delivery> {
  return eventually(
    async () =>
      (await deliveries(merchantId)).find((entry) => entry.eventId === `msg_${eventId}` && entry.state === state),
    { what: `delivery ${eventId} ${state}` },
  );
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
    result: { requested: 3, cancelled: 2, alreadyCancelled: 0, notCancellable: 1, notFound: 0 },
    error: null,
  };
}

/** Nothing left in the webhook queue that could still send something. */
async function queueIdle(): Promise<boolean> {
  const counts = await webhookQueue.getJobCounts('waiting', 'active', 'delayed', 'prioritized');
  return Object.values(counts).every((count) => count === 0);
}

async function metric(outcome: string): Promise<number> {
  const values = (await worker.deps.metrics.webhookDeliveries.get()).values;
  return values.find((value) => value.labels.outcome === outcome)?.value ?? 0;
}

beforeAll(async () => {
  notifier = createWebhookNotifier({ ...worker.deps, queue: () => worker.deps.queues.webhooks });
  receiver = await startWebhookReceiver();
  webhookQueue = new Queue(webhookQueueName, { connection: worker.deps.redis, prefix: env.queuePrefix });
});
afterAll(async () => {
  await webhookQueue?.close();
  await receiver?.close();
});
beforeEach(() => {
  receiver.answer = () => 200;
});

describe('completion webhooks', () => {
  it('delivers a finished job once, signed so that the standardwebhooks package verifies it', async () => {
    const merchant = await createMerchant(env.db);
    const { secret, events, url } = await setWebhook(merchant.id, { url: `${receiver.url}/hooks/one` });
    expect(events).toEqual(['job.completed', 'job.failed', 'job.cancelled']);
    expect(url).toBe(`${receiver.url}/hooks/one`);
    const delivered = await metric('delivered');

    const status = jobStatus();
    // The same outcome reported twice (a retried hand-off) is one event.
    await notifier.jobFinished({ merchantId: merchant.id, type: 'job.completed', status });
    await notifier.jobFinished({ merchantId: merchant.id, type: 'job.completed', status });
    const eventId = webhookEventId(merchant.id, status.jobId, 'job.completed');
    const delivery = await settled(merchant.id, eventId, 'delivered');
    await eventually(async () => ((await queueIdle()) ? true : undefined), { what: 'webhook queue idle' });

    const requests = receiver.withId(`msg_${eventId}`);
    expect(requests).toHaveLength(1);
    const [request] = requests as [ReceivedWebhook];
    expect(request.path).toBe('/hooks/one');
    expect(request.headers['content-type']).toBe('application/json');
    const sentAt = Number(request.headers['webhook-timestamp']);
    expect(Math.abs(sentAt - Date.now() / 1000)).toBeLessThan(30);
    const payload = new Webhook(secret).verify(request.body, request.headers as Record<string, string>);
    expect(payload).toEqual({ type: 'job.completed', timestamp: expect.any(String), data: status });
    expect(Date.parse((payload as { timestamp: string }).timestamp)).not.toBeNaN();
    // The signature is bound to the secret and to the body.
    expect(() =>
      new Webhook('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw/xSAaMzSA1c=').verify(
        request.body,
        request.headers as Record<string, string>,
      ),
    ).toThrow();

    expect(delivery).toMatchObject({
      type: 'job.completed',
      jobId: status.jobId,
      attempts: 1,
      lastStatus: 200,
      lastError: null,
      nextAttemptAt: null,
    });
    expect(delivery.deliveredAt).toEqual(expect.any(Number));
    expect(await metric('delivered')).toBe(delivered + 1);
  });

  it('retries after a 500 with the same webhook-id, a fresh signature, and then delivers', async () => {
    const merchant = await createMerchant(env.db);
    const { secret } = await setWebhook(merchant.id, { url: `${receiver.url}/retry` });
    receiver.answer = (request) => (receiver.withId(request.headers['webhook-id'] as string).length === 1 ? 500 : 204);
    const retried = await metric('retried');

    const status = jobStatus('failed');
    await notifier.jobFinished({ merchantId: merchant.id, type: 'job.failed', status });
    const eventId = webhookEventId(merchant.id, status.jobId, 'job.failed');
    const delivery = await settled(merchant.id, eventId, 'delivered');

    const requests = receiver.withId(`msg_${eventId}`);
    expect(requests).toHaveLength(2);
    for (const request of requests) {
      expect(new Webhook(secret).verify(request.body, request.headers as Record<string, string>)).toMatchObject({
        type: 'job.failed',
        data: { jobId: status.jobId },
      });
    }
    // Every attempt sends the same bytes.
    expect(requests[1]?.body).toBe(requests[0]?.body);
    expect(delivery).toMatchObject({ attempts: 2, lastStatus: 204, lastError: null });
    expect(await metric('retried')).toBe(retried + 1);
  });

  it('counts an answer later than WEBHOOK_TIMEOUT_MS as a failed attempt, and retries', async () => {
    const merchant = await createMerchant(env.db);
    await setWebhook(merchant.id, { url: `${receiver.url}/slow` });
    receiver.answer = (request) =>
      receiver.withId(request.headers['webhook-id'] as string).length === 1 ? 'hang' : 200;

    const status = jobStatus();
    await notifier.jobFinished({ merchantId: merchant.id, type: 'job.completed', status });
    const eventId = webhookEventId(merchant.id, status.jobId, 'job.completed');
    const delivery = await settled(merchant.id, eventId, 'delivered');
    expect(delivery.attempts).toBe(2);
    expect(receiver.withId(`msg_${eventId}`)).toHaveLength(2);
  });

  it('gives up after 7 attempts when the receiver keeps failing', async () => {
    const merchant = await createMerchant(env.db);
    await setWebhook(merchant.id, { url: `${receiver.url}/down` });
    receiver.answer = () => 503;
    const failed = await metric('failed');

    const status = jobStatus('cancelled');
    await notifier.jobFinished({ merchantId: merchant.id, type: 'job.cancelled', status });
    const eventId = webhookEventId(merchant.id, status.jobId, 'job.cancelled');
    const delivery = await settled(merchant.id, eventId, 'failed');

    expect(delivery).toMatchObject({ attempts: 7, lastStatus: 503, lastError: 'HTTP 503', nextAttemptAt: null });
    expect(receiver.withId(`msg_${eventId}`)).toHaveLength(7);
    expect(await metric('failed')).toBe(failed + 1);
  });

  it('sends only the event types the webhook asked for', async () => {
    const merchant = await createMerchant(env.db);
    await setWebhook(merchant.id, { url: `${receiver.url}/failures-only`, events: ['job.failed'] });

    const completed = jobStatus();
    await notifier.jobFinished({ merchantId: merchant.id, type: 'job.completed', status: completed });
    // Nothing was queued for it: the notifier has returned, so no delivery can follow.
    expect(await webhookQueue.getJob(webhookEventId(merchant.id, completed.jobId, 'job.completed'))).toBeUndefined();

    const failedJob = jobStatus('failed');
    await notifier.jobFinished({ merchantId: merchant.id, type: 'job.failed', status: failedJob });
    await settled(merchant.id, webhookEventId(merchant.id, failedJob.jobId, 'job.failed'), 'delivered');

    const seen = receiver.received.filter((request) => request.path === '/failures-only');
    expect(seen.map((request) => JSON.parse(request.body).data.jobId)).toEqual([failedJob.jobId]);
    expect((await deliveries(merchant.id)).map((entry) => entry.type)).toEqual(['job.failed']);
  });

  it("a merchant's job notifies that merchant's webhook only", async () => {
    const first = await createMerchant(env.db);
    const second = await createMerchant(env.db);
    const withoutWebhook = await createMerchant(env.db);
    const firstHook = await setWebhook(first.id, { url: `${receiver.url}/first` });
    await setWebhook(second.id, { url: `${receiver.url}/second` });

    const status = jobStatus();
    await notifier.jobFinished({ merchantId: second.id, type: 'job.completed', status });
    const secondEvent = webhookEventId(second.id, status.jobId, 'job.completed');
    await settled(second.id, secondEvent, 'delivered');
    const other = jobStatus();
    await notifier.jobFinished({ merchantId: withoutWebhook.id, type: 'job.completed', status: other });
    expect(await webhookQueue.getJob(webhookEventId(withoutWebhook.id, other.jobId, 'job.completed'))).toBeUndefined();
    await eventually(async () => ((await queueIdle()) ? true : undefined), { what: 'webhook queue idle' });

    expect(receiver.received.filter((request) => request.path === '/first')).toHaveLength(0);
    expect(receiver.received.filter((request) => request.path === '/second')).toHaveLength(1);
    expect(await deliveries(first.id)).toEqual([]);
    expect(await deliveries(withoutWebhook.id)).toEqual([]);
    // The other merchant's secret does not verify it either.
    const [request] = receiver.received.filter((entry) => entry.path === '/second') as [ReceivedWebhook];
    expect(() =>
      new Webhook(firstHook.secret).verify(request.body, request.headers as Record<string, string>),
    ).toThrow();
  });
});

describe('admin routes', () => {
  let merchant: MerchantFixture;
  beforeAll(async () => {
    merchant = await createMerchant(env.db);
  });

  it('PUT again replaces the URL and events and makes a new secret, which signs from then on', async () => {
    const firstSet = await setWebhook(merchant.id, { url: `${receiver.url}/old`, events: ['job.completed'] });
    const secondSet = await setWebhook(merchant.id, { url: `${receiver.url}/new` });
    expect(secondSet.secret).not.toBe(firstSet.secret);
    expect(secondSet.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(secondSet.events).toEqual(['job.completed', 'job.failed', 'job.cancelled']);

    const status = jobStatus('failed');
    await notifier.jobFinished({ merchantId: merchant.id, type: 'job.failed', status });
    const eventId = webhookEventId(merchant.id, status.jobId, 'job.failed');
    await settled(merchant.id, eventId, 'delivered');
    const [request] = receiver.withId(`msg_${eventId}`) as [ReceivedWebhook];
    expect(request.path).toBe('/new');
    const headers = request.headers as Record<string, string>;
    expect(new Webhook(secondSet.secret).verify(request.body, headers)).toMatchObject({ type: 'job.failed' });
    expect(() => new Webhook(firstSet.secret).verify(request.body, headers)).toThrow();
  });

  it('DELETE removes the webhook (204, also when there is none); a delivery waiting for a retry is given up', async () => {
    const own = await createMerchant(env.db);
    await setWebhook(own.id, { url: `${receiver.url}/removed` });
    // The first attempt removes the webhook before it answers 500: the retry finds none.
    receiver.answer = async (request) => {
      if (request.path === '/removed') {
        const removed = await fetch(`${api.adminUrl}/admin/v1/merchants/${own.id}/webhook`, {
          method: 'DELETE',
          headers: adminHeaders(),
        });
        expect(removed.status).toBe(204);
      }
      return 500;
    };
    const status = jobStatus();
    await notifier.jobFinished({ merchantId: own.id, type: 'job.completed', status });
    const eventId = webhookEventId(own.id, status.jobId, 'job.completed');
    const delivery = await settled(own.id, eventId, 'failed');
    expect(delivery).toMatchObject({ attempts: 1, lastError: 'webhook removed', nextAttemptAt: null });
    expect(receiver.withId(`msg_${eventId}`)).toHaveLength(1);

    const again = await fetch(`${api.adminUrl}/admin/v1/merchants/${own.id}/webhook`, {
      method: 'DELETE',
      headers: adminHeaders(),
    });
    expect(again.status).toBe(204);
    expect(await again.text()).toBe('');

    // No webhook: a later job queues nothing.
    const later = jobStatus();
    await notifier.jobFinished({ merchantId: own.id, type: 'job.completed', status: later });
    expect(await webhookQueue.getJob(webhookEventId(own.id, later.jobId, 'job.completed'))).toBeUndefined();
  });

  it('GET deliveries lists the latest 100, newest first', async () => {
    const busy = await createMerchant(env.db);
    const base = Date.now() - 1_000_000;
    await env.db
      .insertInto('webhook_deliveries')
      .values(
        Array.from({ length: 105 }, (_, index) => ({
          id: randomUUID(),
          merchant_id: busy.id,
          type: 'job.completed',
          job_id: `job-${index}`,
          payload: '{}',
          created_at: new Date(base + index * 1_000),
        })),
      )
      .execute();
    const listed = await deliveries(busy.id);
    expect(listed).toHaveLength(100);
    expect(listed[0]).toMatchObject({ jobId: 'job-104', state: 'pending', attempts: 0, lastStatus: null });
    expect(listed[99]?.jobId).toBe('job-5');
    const created = listed.map((entry) => entry.createdAt);
    expect(created).toEqual([...created].sort((a, b) => b - a));
  });
});
