import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../helpers/api.js';
import { requestCancellation, waitForJob } from '../helpers/cancellation.js';
import { createTestEnvironment, type TestEnvironment } from '../helpers/environment.js';
import { createMerchant, type MerchantFixture } from '../helpers/fixtures.js';
import { type RedisServer, startRedisServer } from '../helpers/redis-server.js';
import { startTestWorker, type TestWorker } from '../helpers/worker.js';

/**
 * Redis memory stays bounded: a finished job keeps nothing that grows with its size. 200 bulkCancel
 * requests of 10,000 random 200-character external ids (2 MB each, all "not found", each split into
 * ten parts) go through a Redis of this file's own; once all have completed, `used_memory` is within
 * 20 MiB of what it was before them: far below what jobs keeping their payloads would hold (every
 * parent its payload and every part a copy, for a day: about 845 MB, measured 2026-11-22).
 */

const REQUESTS = 200;
const IDS_PER_REQUEST = 10_000;
const MIB = 1024 * 1024;

let redis: RedisServer;
let env: TestEnvironment;
let api: TestApi;
let worker: TestWorker;
let merchant: MerchantFixture;
let probe: Redis;

beforeAll(async () => {
  redis = await startRedisServer();
  env = await createTestEnvironment({ REDIS_URL: redis.url, WORKER_BULK_CONCURRENCY: '4', MAX_QUEUED_JOBS: '1000' });
  [api, worker] = await Promise.all([startTestApi(env), startTestWorker(env)]);
  merchant = await createMerchant(env.db);
  probe = new Redis(redis.url);
}, 60_000);

afterAll(async () => {
  probe?.disconnect();
  await Promise.all([api?.close(), worker?.close()]);
  await env?.close();
  await redis?.stop();
});

async function usedMemory(): Promise<number> {
  const info = await probe.info('memory');
  return Number(/used_memory:(\d+)/.exec(info)?.[1]);
}

function randomExternalIds(): string[] {
  return Array.from({ length: IDS_PER_REQUEST }, () => randomBytes(100).toString('hex'));
}

describe('Redis memory after large bulk jobs', { timeout: 600_000 }, () => {
  it('returns to within 20 MiB of where it was once 200 jobs of 10,000 long ids have completed', async () => {
    const before = await usedMemory();
    const jobIds: string[] = [];
    let peak = before;
    for (let request = 0; request < REQUESTS; request++) {
      jobIds.push(await requestCancellation(api, merchant, 'bulkCancel', { externalIds: randomExternalIds() }));
      if (request % 20 === 19) peak = Math.max(peak, await usedMemory());
    }
    for (const jobId of jobIds) {
      const status = await waitForJob(api, merchant, jobId, 300_000);
      expect(status.result).toEqual({
        requested: IDS_PER_REQUEST,
        cancelled: 0,
        alreadyCancelled: 0,
        notCancellable: 0,
        notFound: IDS_PER_REQUEST,
      });
    }
    const after = await usedMemory();
    // The payloads really were in Redis while the jobs waited: the bound is not met by never storing them.
    expect(peak - before).toBeGreaterThan(20 * MIB);
    expect(after - before).toBeLessThanOrEqual(20 * MIB);
  });
});
