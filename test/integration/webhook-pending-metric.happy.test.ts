import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ShardLayout } from '../../src/shared/redis/shards.js';
import { Metrics } from '../../src/shared/telemetry/metrics.js';
import {
  addPending,
  finishPending,
  refreshWebhookPending,
  takeAllPending,
} from '../../src/shared/webhooks/webhook-pending.js';
import { useTestContext } from '../helpers/test-context.js';

// gateway_webhook_pending: webhook deliveries pending per merchant, bounded in cardinality (the top 20
// merchants by backlog by id, the rest summed as merchant="other"), kept exact as events arrive and end.

const { env } = useTestContext();
let redis: Redis;

beforeAll(async () => {
  redis = new Redis(env.redisUrl);
});
afterAll(async () => {
  redis?.disconnect();
});

async function pendingSeries(metrics: Metrics): Promise<Map<string, number>> {
  const [metric] = (await metrics.registry.getMetricsAsJSON()).filter(
    (entry) => entry.name === 'gateway_webhook_pending',
  );
  return new Map(
    ((metric?.values ?? []) as Array<{ labels: { merchant?: string }; value: number }>).map((value) => [
      String(value.labels.merchant),
      value.value,
    ]),
  );
}

describe('gateway_webhook_pending', () => {
  it('names the 20 merchants with the most pending events and sums the rest as "other"', async () => {
    const deps = {
      shards: new ShardLayout(env.config),
      redis,
      metrics: new Metrics({ collectDefaults: false, processName: 'test' }),
    };
    // Merchant n has n pending events (1 to 25): the top 20 are merchants 6..25; 1..5 sum to 15.
    const merchants = Array.from({ length: 25 }, () => randomUUID());
    const events = new Map<string, string[]>();
    for (const [index, merchantId] of merchants.entries()) {
      const ids = Array.from({ length: index + 1 }, () => randomUUID());
      events.set(merchantId, ids);
      for (const eventId of ids) await addPending(deps, merchantId, eventId, 1_000);
    }
    await refreshWebhookPending(deps);
    let series = await pendingSeries(deps.metrics);
    expect(series.size).toBe(21);
    for (const [index, merchantId] of merchants.entries()) {
      expect(series.get(merchantId)).toBe(index >= 5 ? index + 1 : undefined);
    }
    expect(series.get('other')).toBe(1 + 2 + 3 + 4 + 5);

    // Events that end leave the count; a merchant whose last event ended leaves the metric.
    const top = merchants[24] as string;
    for (const eventId of (events.get(top) as string[]).slice(0, 24)) await finishPending(deps, top, eventId);
    await finishPending(deps, merchants[23] as string, (events.get(merchants[23] as string) as string[])[0] as string);
    await takeAllPending(deps, merchants[22] as string);
    await refreshWebhookPending(deps);
    series = await pendingSeries(deps.metrics);
    expect(series.get(top)).toBeUndefined();
    expect(series.get(merchants[23] as string)).toBe(23);
    expect(series.get(merchants[22] as string)).toBeUndefined();
    // Two left the top 20: merchants 4 and 5 (4 and 5 events) are named again.
    expect(series.get(merchants[4] as string)).toBe(5);
    expect(series.get(merchants[3] as string)).toBe(4);
    expect(series.get('other')).toBe(1 + 2 + 3 + 1);

    // Every merchant's events given up: nothing pending, nobody named.
    for (const merchantId of merchants) await takeAllPending(deps, merchantId);
    await refreshWebhookPending(deps);
    expect([...(await pendingSeries(deps.metrics)).entries()]).toEqual([['other', 0]]);
  });

  it('counts an event past the cap once: the merchant holds at most the cap', async () => {
    const deps = {
      shards: new ShardLayout(env.config),
      redis,
      metrics: new Metrics({ collectDefaults: false, processName: 'test' }),
    };
    const merchantId = randomUUID();
    for (let index = 0; index < 5; index++) await addPending(deps, merchantId, randomUUID(), 3);
    await refreshWebhookPending(deps);
    expect((await pendingSeries(deps.metrics)).get(merchantId)).toBe(3);
  });
});
