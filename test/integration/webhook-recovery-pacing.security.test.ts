import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { webhookPendingKey } from '../../src/shared/redis/redis-keys.js';
import { createMerchant } from '../helpers/fixtures.js';
import { webhookCall } from '../helpers/merchant-webhook-calls.js';
import { useTestContext } from '../helpers/test-context.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { eventually } from '../helpers/worker.js';

// A recovery of a month of events is paced: it never holds more than half of the merchant's pending cap
// in Redis, never pushes an event out of the pending set, and reaches the receiver through the merchant's
// two delivery slots, not as a burst.

const PENDING_CAP = 40;
const EVENTS = 150;

const { env, api, worker } = useTestContext({
  settings: {
    WEBHOOK_ALLOW_PRIVATE: 'true',
    WEBHOOK_MAX_PENDING_PER_MERCHANT: String(PENDING_CAP),
  },
  api: true,
  worker: true,
});
let receiver: WebhookReceiver;

beforeAll(async () => {
  receiver = await startWebhookReceiver();
});
afterAll(async () => {
  await receiver?.close();
});

describe('webhooks/recover', () => {
  it(`sends ${EVENTS} events of the past month with at most half the pending cap queued and 2 requests open at once`, async () => {
    const merchant = await createMerchant(env.db);
    const put = await webhookCall(api.baseUrl, merchant, 'put', { url: `${receiver.url}/month` });
    expect(put.status).toBe(200);
    // A month of events the endpoint never got (dropped while it was disabled), spread over 29 days.
    await sql`
      INSERT INTO webhook_deliveries (id, merchant_id, type, job_id, payload, state, last_error, created_at)
      SELECT gen_random_uuid(), ${merchant.id}::uuid, 'job.completed', 'job-' || n,
        json_build_object('type', 'job.completed', 'n', n), 'dropped', 'endpoint disabled: test',
        now() - make_interval(mins => n * 278)
      FROM generate_series(1, ${EVENTS}) AS n
    `.execute(env.db);
    // Slow enough that a burst would pile up.
    receiver.answer = () => new Promise((resolve) => setTimeout(() => resolve(200), 20));

    const recovery = await webhookCall(api.baseUrl, merchant, 'recover', { since: Date.now() - 30 * 24 * 3_600_000 });
    expect(recovery.status, recovery.text).toBe(200);
    expect(recovery.body.events).toBe(EVENTS);

    let peakPending = 0;
    const pendingKey = webhookPendingKey(env.queuePrefix, merchant.id);
    await eventually(
      async () => {
        peakPending = Math.max(peakPending, await worker.deps.redis.zcard(pendingKey));
        const left = await env.db
          .selectFrom('webhook_deliveries')
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .where('merchant_id', '=', merchant.id)
          .where('state', '!=', 'delivered')
          .executeTakeFirstOrThrow();
        return Number(left.n) === 0 ? true : undefined;
      },
      { what: 'every recovered event delivered', timeoutMs: 60_000, intervalMs: 20 },
    );
    expect(peakPending).toBeGreaterThan(0);
    expect(peakPending).toBeLessThanOrEqual(PENDING_CAP / 2);
    expect(receiver.received.filter((request) => request.path === '/month')).toHaveLength(EVENTS);
    expect(new Set(receiver.received.map((request) => request.headers['webhook-id'])).size).toBe(EVENTS);
    expect(receiver.peakOpen('/month')).toBeLessThanOrEqual(2);
    // Nothing was given up to make room.
    expect((await worker.deps.metrics.webhookEventsDropped.get()).values.every((value) => value.value === 0)).toBe(
      true,
    );
  });
});
