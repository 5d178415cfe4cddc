import { randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PublicJobStatus } from '../../src/shared/jobs/job-status-schema.js';
import { webhookPendingKey } from '../../src/shared/redis/redis-keys.js';
import { webhookEventId } from '../../src/shared/webhooks/webhook-catalogue.js';
import { createWebhookNotifier, type WebhookNotifier } from '../../src/shared/webhooks/webhook-notifier.js';
import { createMerchant } from '../helpers/fixtures.js';
import { useTestContext } from '../helpers/test-context.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { eventually } from '../helpers/worker.js';

// A dead receiver holds a bounded part of the service: merchant A's receiver never answers (each attempt
// ends at WEBHOOK_TIMEOUT_MS), yet A holds at most WEBHOOK_MERCHANT_CONCURRENCY attempts at once, B's
// events go out meanwhile, A's endpoint is disabled once every attempt has failed for
// WEBHOOK_DISABLE_AFTER_MS (its pending events recorded dropped), and a PUT enables it again. The pending
// cap gives up a merchant's oldest events, each recorded. Real Postgres, Redis, worker and HTTP receiver.

const MERCHANT_CONCURRENCY = 2;
const A_EVENTS = 12;
const B_EVENTS = 5;

const { env, api, worker } = useTestContext({
  settings: {
    WEBHOOK_ALLOW_PRIVATE: 'true',
    WEBHOOK_RETRY_SCALE: '0.0001',
    WEBHOOK_TIMEOUT_MS: '1500',
    WEBHOOK_DELIVERY_CONCURRENCY: '6',
    WEBHOOK_MERCHANT_CONCURRENCY: String(MERCHANT_CONCURRENCY),
    WEBHOOK_DISABLE_AFTER_MS: '4000',
  },
  api: true,
  worker: true,
});
let notifier: WebhookNotifier;
let receiver: WebhookReceiver;

type Json = Record<string, any>;

const adminHeaders = () => ({ authorization: `Bearer ${env.config.ADMIN_TOKEN}`, 'content-type': 'application/json' });

async function admin(method: string, path: string, body?: Json): Promise<{ status: number; body: Json }> {
  const response = await fetch(`${api.adminUrl}/admin/v1${path}`, {
    method,
    headers: adminHeaders(),
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  return { status: response.status, body: response.status === 204 ? {} : ((await response.json()) as Json) };
}

async function deliveries(merchantId: string): Promise<Json[]> {
  return (await admin('GET', `/merchants/${merchantId}/webhook/deliveries`)).body.deliveries as Json[];
}

function jobStatus(): PublicJobStatus {
  const now = Date.now();
  return {
    jobId: randomUUID(),
    operation: 'bulkCancel',
    state: 'completed',
    createdAt: now - 2_000,
    startedAt: now - 1_000,
    finishedAt: now,
    progress: 100,
    result: { requested: 1, cancelled: 1, alreadyCancelled: 0, notCancellable: 0, notFound: 0 },
    error: null,
  };
}

async function dropped(reason: string): Promise<number> {
  const values = (await worker.deps.metrics.webhookEventsDropped.get()).values;
  return values.find((value) => value.labels.reason === reason)?.value ?? 0;
}

beforeAll(async () => {
  notifier = createWebhookNotifier({ ...worker.deps, queue: () => worker.deps.queues.webhooks });
  receiver = await startWebhookReceiver();
  receiver.answer = (request) => (request.path === '/a' ? 'hang' : 200);
});
afterAll(async () => {
  await receiver?.close();
});

describe('a merchant whose receiver hangs', { timeout: 60_000 }, () => {
  let merchantA: string;
  const aEvents: string[] = [];

  it('holds at most WEBHOOK_MERCHANT_CONCURRENCY attempts, while another merchant is served meanwhile', async () => {
    const [a, b] = await Promise.all([createMerchant(env.db), createMerchant(env.db)]);
    merchantA = a.id;
    expect((await admin('PUT', `/merchants/${a.id}/webhook`, { url: `${receiver.url}/a` })).status).toBe(200);
    expect((await admin('PUT', `/merchants/${b.id}/webhook`, { url: `${receiver.url}/b` })).status).toBe(200);

    for (let index = 0; index < A_EVENTS; index++) {
      const status = jobStatus();
      aEvents.push(webhookEventId(a.id, status.jobId, 'job.completed'));
      await notifier.jobFinished({ merchantId: a.id, type: 'job.completed', status });
    }
    // A's slots are taken: its first attempts hang at the receiver.
    await eventually(async () => (receiver.open('/a') === MERCHANT_CONCURRENCY ? true : undefined), {
      what: "A's slots held",
    });
    const bEvents: string[] = [];
    for (let index = 0; index < B_EVENTS; index++) {
      const status = jobStatus();
      bEvents.push(webhookEventId(b.id, status.jobId, 'job.completed'));
      await notifier.jobFinished({ merchantId: b.id, type: 'job.completed', status });
    }

    // B's events are not waiting behind A's: each arrives, well inside one of A's hanging attempts' bound
    // times its backlog (12 events / 2 slots × 1.5 s).
    await eventually(
      async () => (bEvents.every((id) => receiver.withId(`msg_${id}`).length === 1) ? true : undefined),
      { timeoutMs: 10_000, what: "B's events" },
    );
    // Meanwhile A never had more than its slots in flight, and most of its events have not been tried yet.
    expect(receiver.peakOpen('/a')).toBeLessThanOrEqual(MERCHANT_CONCURRENCY);
    const aTried = new Set(receiver.received.filter((r) => r.path === '/a').map((r) => r.headers['webhook-id']));
    expect(aTried.size).toBeLessThan(A_EVENTS);
    const bRows = await deliveries(b.id);
    expect(bRows.filter((row) => row.state === 'delivered')).toHaveLength(B_EVENTS);
  });

  it('is disabled once every attempt has failed for WEBHOOK_DISABLE_AFTER_MS, its pending events dropped with the reason', async () => {
    const webhook = await eventually(
      async () => {
        const { body } = await admin('GET', `/merchants/${merchantA}/webhook`);
        return body.enabled === false ? body : undefined;
      },
      { timeoutMs: 30_000, what: "A's endpoint disabled" },
    );
    expect(webhook.disabledAt).toBeGreaterThan(0);
    expect(webhook.failingSince).toBeLessThanOrEqual(webhook.disabledAt - 4_000);
    expect(webhook.disabledReason).toMatch(/^every delivery failed since \S+Z \(last: no answer within 1500 ms\)$/);
    expect(receiver.peakOpen('/a')).toBeLessThanOrEqual(MERCHANT_CONCURRENCY);

    // Every one of A's events ends recorded: none is left pending, and those not sent say why.
    const rows = await eventually(
      async () => {
        const list = await deliveries(merchantA);
        return list.length === A_EVENTS && list.every((row) => row.state !== 'pending') ? list : undefined;
      },
      { timeoutMs: 20_000, what: "A's deliveries settled" },
    );
    const droppedRows = rows.filter((row) => row.state === 'dropped');
    expect(droppedRows.length).toBeGreaterThan(0);
    for (const row of droppedRows) expect(row.lastError).toMatch(/^endpoint disabled: every delivery failed since/);
    expect(await dropped('disabled')).toBeGreaterThanOrEqual(droppedRows.length);
    expect(await worker.deps.redis.zcard(webhookPendingKey(env.queuePrefix, merchantA))).toBe(0);
    expect(new Set(rows.map((row) => row.eventId))).toEqual(new Set(aEvents.map((id) => `msg_${id}`)));
  });

  it('records new events as dropped, not sent, while disabled; a PUT enables it again', async () => {
    const sentBefore = receiver.received.length;
    const status = jobStatus();
    const eventId = webhookEventId(merchantA, status.jobId, 'job.completed');
    await notifier.jobFinished({ merchantId: merchantA, type: 'job.completed', status });
    const row = (await deliveries(merchantA)).find((entry) => entry.eventId === `msg_${eventId}`);
    expect(row).toMatchObject({
      state: 'dropped',
      attempts: 0,
      lastError: expect.stringMatching(/^endpoint disabled:/),
    });
    const queued = await worker.deps.queues.webhooks.getJob(eventId);
    expect(queued).toBeUndefined();

    receiver.answer = () => 200;
    expect((await admin('PUT', `/merchants/${merchantA}/webhook`, { url: `${receiver.url}/a` })).status).toBe(200);
    const { body } = await admin('GET', `/merchants/${merchantA}/webhook`);
    expect(body).toMatchObject({ enabled: true, disabledAt: null, disabledReason: null, failingSince: null });

    const next = jobStatus();
    const nextId = webhookEventId(merchantA, next.jobId, 'job.completed');
    await notifier.jobFinished({ merchantId: merchantA, type: 'job.completed', status: next });
    await eventually(
      async () =>
        (await deliveries(merchantA)).find((entry) => entry.eventId === `msg_${nextId}` && entry.state === 'delivered'),
      { what: 'delivered after re-enabling' },
    );
    // The event dropped while disabled is not sent later.
    expect(receiver.withId(`msg_${eventId}`)).toHaveLength(0);
    expect(receiver.received.length).toBeGreaterThan(sentBefore);
  });
});

describe('the pending cap', () => {
  it("gives up a merchant's oldest pending events past WEBHOOK_MAX_PENDING_PER_MERCHANT, each recorded and counted", async () => {
    const cap = 3;
    // A queue name no worker serves: the events stay pending, as behind a dead receiver.
    const queue = new Queue('webhooks-cap-test', { connection: worker.deps.redis, prefix: env.queuePrefix });
    try {
      const capped = createWebhookNotifier({
        ...worker.deps,
        config: { ...env.config, WEBHOOK_MAX_PENDING_PER_MERCHANT: cap },
        queue: () => queue,
      });
      const merchant = await createMerchant(env.db);
      expect((await admin('PUT', `/merchants/${merchant.id}/webhook`, { url: `${receiver.url}/cap` })).status).toBe(
        200,
      );
      const before = await dropped('pending_cap');
      const events: string[] = [];
      for (let index = 0; index < 8; index++) {
        const status = jobStatus();
        events.push(webhookEventId(merchant.id, status.jobId, 'job.completed'));
        await capped.jobFinished({ merchantId: merchant.id, type: 'job.completed', status });
      }
      const oldest = events.slice(0, 8 - cap);
      const newest = events.slice(8 - cap);

      const pending = await worker.deps.redis.zrange(webhookPendingKey(env.queuePrefix, merchant.id), 0, -1);
      expect(new Set(pending)).toEqual(new Set(newest));
      expect(await worker.deps.redis.pttl(webhookPendingKey(env.queuePrefix, merchant.id))).toBeGreaterThan(0);
      for (const id of oldest) expect(await queue.getJob(id)).toBeUndefined();
      for (const id of newest) expect(await queue.getJob(id)).toBeDefined();

      const rows = await deliveries(merchant.id);
      expect(rows.map((row) => row.eventId).sort()).toEqual(oldest.map((id) => `msg_${id}`).sort());
      for (const row of rows) {
        expect(row).toMatchObject({
          state: 'dropped',
          attempts: 0,
          lastError: `given up unsent: more than ${cap} events were pending`,
        });
      }
      expect((await dropped('pending_cap')) - before).toBe(oldest.length);
    } finally {
      await queue.obliterate({ force: true });
      await queue.close();
    }
  });
});
