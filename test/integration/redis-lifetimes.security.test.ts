import { beforeAll, describe, expect, it } from 'vitest';
import {
  abortKey,
  abortKeyPrefix,
  idempotencyRecordKey,
  keyLifetimes,
  merchantJobsKey,
  merchantTurnsKey,
  WITHDRAWN,
} from '../../src/shared/redis/redis-keys.js';
import { cancelPaths, requestCancellation } from '../helpers/cancellation.js';
import { createMerchant, type MerchantFixture } from '../helpers/fixtures.js';
import { signedBody } from '../helpers/signing.js';
import { useTestContext } from '../helpers/test-context.js';

// What the service's own Redis keys cost and how long they live, read from a real Redis with no worker
// running (so jobs wait, as behind a backlog): idempotency records stay under 150 bytes each (MEMORY
// USAGE, key, value and expiry together), withdrawn marks live no longer than the deduplication window,
// and a merchant's turn and job sets have a lifetime.

const abortPath = '/api/v1/integration/jobs/cancel';

const { env, api } = useTestContext({ api: true });
let merchant: MerchantFixture;

beforeAll(async () => {
  merchant = await createMerchant(env.db);
});

describe('idempotency records', () => {
  it('take at most 150 bytes of Redis each, pending and done (this prefix is 6 longer than {rewards})', async () => {
    const redis = api.deps.redis;
    const sizes: number[] = [];
    for (const [index, operation] of (['cancel', 'bulkCancel', 'bulkCancelByQuery'] as const).entries()) {
      const fields =
        operation === 'cancel'
          ? { externalId: `idem-size-${index}` }
          : operation === 'bulkCancel'
            ? { externalIds: ['a', 'b', 'c'] }
            : { playerIds: ['p-1', 'p-2'] };
      // A merchant's key as long as a UUID with a prefix: a typical choice.
      const key = `order-${crypto.randomUUID()}`;
      const response = await api.post(cancelPaths[operation], signedBody(merchant, fields), { 'Idempotency-Key': key });
      expect(response.status).toBe(200);
      const replay = await api.post(cancelPaths[operation], signedBody(merchant, fields), { 'Idempotency-Key': key });
      expect(replay.headers.get('x-job-id')).toBe(response.headers.get('x-job-id'));
    }
    const keys = await redis.keys(idempotencyRecordKey(env.queuePrefix, '*'));
    expect(keys).toHaveLength(3);
    for (const key of keys) sizes.push(Number(await redis.call('MEMORY', 'USAGE', key)));
    for (const size of sizes) expect(size).toBeLessThanOrEqual(150);
  });
});

describe('withdrawn marks', () => {
  it('live no longer than the deduplication window; a plain abort mark keeps its own lifetime', async () => {
    const redis = api.deps.redis;
    // A waiting single cancel aborted: withdrawn from its batch.
    const aborted = await requestCancellation(api, merchant, 'cancel', { externalId: 'withdrawn-1' });
    const answer = await api.post(abortPath, signedBody(merchant, { jobId: aborted }));
    expect(answer.status).toBe(200);
    expect(((await answer.json()) as { state: string }).state).toBe('cancelled');
    expect(await redis.get(abortKey(env.queuePrefix, aborted))).toBe(WITHDRAWN);

    // Two identical waiting cancels: the second is stored withdrawn and shares the first's id.
    const first = await requestCancellation(api, merchant, 'cancel', { externalId: 'withdrawn-twin' });
    const second = await requestCancellation(api, merchant, 'cancel', { externalId: 'withdrawn-twin' });
    expect(second).toBe(first);

    const marks = await redis.keys(`${abortKeyPrefix(env.queuePrefix)}*`);
    const withdrawn: string[] = [];
    for (const mark of marks) if ((await redis.get(mark)) === WITHDRAWN) withdrawn.push(mark);
    expect(withdrawn.length).toBe(2);
    for (const mark of withdrawn) {
      const ttl = await redis.pttl(mark);
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(keyLifetimes.cancelDedupMs);
    }
    expect(keyLifetimes.withdrawnMarkMs).toBeLessThanOrEqual(keyLifetimes.cancelDedupMs);

    // A bulk job aborted while queued keeps a plain mark, as long as failed jobs are kept.
    const bulk = await requestCancellation(api, merchant, 'bulkCancel', { externalIds: ['plain-1'] });
    expect((await api.post(abortPath, signedBody(merchant, { jobId: bulk }))).status).toBe(200);
    const plainTtl = await redis.ttl(abortKey(env.queuePrefix, bulk));
    expect(plainTtl).toBeGreaterThan(keyLifetimes.abortMarkSeconds - 60);
  });
});

describe("a merchant's turn and job sets", () => {
  it('have a lifetime, refreshed on every write', async () => {
    const redis = api.deps.redis;
    const other = await createMerchant(env.db);
    await requestCancellation(api, other, 'bulkCancel', { externalIds: ['turn-1'] });
    const turns = merchantTurnsKey(env.queuePrefix, other.id);
    const jobs = merchantJobsKey(env.queuePrefix, other.id);
    for (const key of [turns, jobs]) {
      expect(await redis.zcard(key)).toBe(1);
      const ttl = await redis.pttl(key);
      expect(ttl).toBeGreaterThan(keyLifetimes.merchantTurnsMs - 60_000);
      expect(ttl).toBeLessThanOrEqual(keyLifetimes.merchantTurnsMs);
    }
    // Shortened, then written again: the lifetime is back to full.
    await redis.pexpire(turns, 60_000);
    await requestCancellation(api, other, 'bulkCancel', { externalIds: ['turn-2'] });
    expect(await redis.pttl(turns)).toBeGreaterThan(keyLifetimes.merchantTurnsMs - 60_000);
  });
});
