import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { batchIdOf } from '../../src/shared/cancellations/member-ids.js';
import { ShardedQueues } from '../../src/shared/jobs/queues.js';
import { queueNames } from '../../src/shared/redis/redis-keys.js';
import { ShardLayout } from '../../src/shared/redis/shards.js';
import { Metrics } from '../../src/shared/telemetry/metrics.js';
import { webhookQueueName } from '../../src/shared/webhooks/webhook-catalogue.js';
import { createHealthApp } from '../../src/worker/health-server.js';
import { startTestApi } from '../helpers/api.js';
import { requestCancellation } from '../helpers/cancellation.js';
import { createMerchant, type MerchantFixture } from '../helpers/fixtures.js';
import { useTestContext } from '../helpers/test-context.js';

// The gauges the alerts in deploy/prometheus/alerts.yml read: how long the next job has waited, and
// readiness. No worker runs here, so submitted jobs stay waiting.

const { env, api } = useTestContext({ api: true });
let merchant: MerchantFixture;
let redis: Redis;

beforeAll(async () => {
  merchant = await createMerchant(env.db);
  redis = new Redis(env.redisUrl);
});
afterAll(async () => {
  redis?.disconnect();
});

/** The value of one series in Prometheus text, or undefined when it is absent. */
function sample(metrics: string, series: string): number | undefined {
  const line = metrics.split('\n').find((entry) => entry.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

const ageSeries = (queue: string) => `gateway_queue_oldest_waiting_age_seconds{queue="${queue}",process="api"}`;

describe('gateway_queue_oldest_waiting_age_seconds', () => {
  it('is the age of the job that has waited longest, and 0 for an empty queue', async () => {
    const first = await requestCancellation(api, merchant, 'cancel', { externalId: 'backlog-first' });
    const second = await requestCancellation(api, merchant, 'cancel', { externalId: 'backlog-second' });
    expect(second).not.toBe(first);

    // Sent one after the other, they were stored in queue jobs (batches) of their own.
    expect(batchIdOf(second)).not.toBe(batchIdOf(first));
    // Backdate the first one's batch by ten minutes, as if it had been waiting that long; the second stays new.
    const queue = new Queue(queueNames.single, { connection: redis, prefix: env.queuePrefix });
    const addedAt = Date.now() - 600_000;
    await redis.hset(queue.toKey(batchIdOf(first)), 'timestamp', String(addedAt));

    const before = Date.now();
    const metrics = await (await api.get('/metrics')).text();
    const after = Date.now();
    const age = sample(metrics, ageSeries(queueNames.single));
    expect(age).toBeGreaterThanOrEqual((before - addedAt) / 1000);
    expect(age).toBeLessThanOrEqual((after - addedAt) / 1000);
    expect(sample(metrics, ageSeries(queueNames.bulk))).toBe(0);
    expect(sample(metrics, `gateway_queue_jobs{queue="${queueNames.single}",state="waiting",process="api"}`)).toBe(2);
    // Every queue is counted, the webhooks queue too (queues.ts builds them all).
    expect(sample(metrics, `gateway_queue_jobs{queue="${webhookQueueName}",state="waiting",process="api"}`)).toBe(0);
    expect(sample(metrics, ageSeries(webhookQueueName))).toBe(0);

    // Once the oldest job has left the queue, the next one is measured.
    await queue.remove(batchIdOf(first));
    const next = sample(await (await api.get('/metrics')).text(), ageSeries(queueNames.single));
    expect(next).toBeLessThan(60);
    expect(next).toBeGreaterThanOrEqual(0);
    await queue.close();
  });
});

describe('gateway_ready', () => {
  it('is 1 on the API and the worker while Postgres and Redis answer', async () => {
    expect(sample(await (await api.get('/metrics')).text(), 'gateway_ready{process="api"}')).toBe(1);

    // The worker's health server, in process, over this file's queues.
    const shards = new ShardLayout(env.config);
    const queues = new ShardedQueues(redis, shards);
    const metrics = new Metrics({ collectDefaults: false, processName: 'worker' });
    const health = createHealthApp({ config: env.config, db: env.db, redis, shards, metrics, queues });
    const text = await (await health.request('/metrics')).text();
    expect(sample(text, 'gateway_ready{process="worker"}')).toBe(1);
    expect(text).toContain(`gateway_queue_oldest_waiting_age_seconds{queue="${queueNames.bulk}",process="worker"} 0`);
    expect(text).toContain(`gateway_queue_jobs{queue="${webhookQueueName}",state="waiting",process="worker"} 0`);
    await queues.close();
  });

  it('is 0 on an API whose Redis does not answer, and /readyz agrees', async () => {
    const downApi = await startTestApi(env, {}, { redisUrl: 'redis://127.0.0.1:1', waitForRedis: false });
    try {
      expect((await downApi.get('/readyz')).status).toBe(503);
      expect(sample(await (await downApi.get('/metrics')).text(), 'gateway_ready{process="api"}')).toBe(0);
    } finally {
      await downApi.close();
    }
  });
});
