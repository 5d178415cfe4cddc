import { beforeAll, describe, expect, it } from 'vitest';
import { MAX_BATCH_MEMBERS } from '../../src/api/cancellations/single-cancel-batcher.js';
import { batchIdOf, memberJobId, singleCancelDeduplicationKey } from '../../src/shared/cancellations/member-ids.js';
import { deduplicationKey } from '../../src/shared/jobs/job-catalogue.js';
import { cancelDedupKey } from '../../src/shared/redis/redis-keys.js';
import { cancelPaths, fetchJobStatus, requestCancellation, waitForJob } from '../helpers/cancellation.js';
import { createConfiguration, createMerchant, createRewards, type MerchantFixture } from '../helpers/fixtures.js';
import { signedBody } from '../helpers/signing.js';
import { useTestContext } from '../helpers/test-context.js';
import { startTestWorker } from '../helpers/worker.js';

/**
 * Single cancels that arrive together are stored as one queue job per merchant (a batch), yet each
 * stays a job of its own: its id, status, audit row and reward record; identical requests share a
 * member only while its batch waits.
 */

const { env, api } = useTestContext({ api: true });
let merchant: MerchantFixture;
let other: MerchantFixture;

beforeAll(async () => {
  [merchant, other] = await Promise.all([createMerchant(env.db), createMerchant(env.db)]);
});

async function rewardsFor(owner: MerchantFixture, prefix: string, count: number) {
  const configuration = await createConfiguration(env.db, { merchantId: owner.id, startDate: Date.now() });
  return createRewards(env.db, {
    merchantId: owner.id,
    rewardConfigurationId: configuration.id,
    rewards: Array.from({ length: count }, (_, index) => ({ playerId: `${prefix}-${index}` })),
  });
}

/** Stores single cancels in one turn of the event loop, as the API does with requests read together. */
function enqueueTogether(owner: MerchantFixture, rewardIds: readonly string[]) {
  return Promise.all(
    rewardIds.map((id) =>
      api.deps.producer.enqueue(
        'cancel',
        { merchantId: owner.id, acceptedAt: Date.now(), id },
        deduplicationKey(owner.id, 'cancel', { id }),
      ),
    ),
  );
}

const singleQueue = () => api.deps.producer.queues.forShard(null).queues.cancel;

async function jobsCarrying(jobIds: readonly string[]) {
  return env.db
    .selectFrom('rewards')
    .select(['id', 'status', 'cancellation_job_id'])
    .where('cancellation_job_id', 'in', jobIds)
    .execute();
}

describe('single cancels stored together', { timeout: 60_000 }, () => {
  it('are one queue job per merchant, each request a job of its own with its own id, status and record', async () => {
    const mine = await rewardsFor(merchant, 'together', 30);
    const theirs = await rewardsFor(other, 'together-other', 5);
    const waitingBefore = await singleQueue().getWaitingCount();
    const [stored, storedOther] = await Promise.all([
      enqueueTogether(
        merchant,
        mine.map((reward) => reward.id),
      ),
      enqueueTogether(
        other,
        theirs.map((reward) => reward.id),
      ),
    ]);
    const ids = stored.map(({ jobId }) => jobId);
    expect(new Set(ids).size).toBe(30);
    expect(new Set(ids.map(batchIdOf)).size).toBe(1);
    expect(new Set(storedOther.map(({ jobId }) => batchIdOf(jobId))).size).toBe(1);
    expect(batchIdOf(storedOther[0]?.jobId as string)).not.toBe(batchIdOf(ids[0] as string));
    expect(await singleQueue().getWaitingCount()).toBe(waitingBefore + 2);

    // Each one answers its own status, queued while its batch waits; the merchant sees only its own.
    const status = await fetchJobStatus(api, merchant, ids[7] as string);
    expect(await status.json()).toMatchObject({ jobId: ids[7], operation: 'cancel', state: 'queued' });
    expect((await fetchJobStatus(api, other, ids[7] as string)).status).toBe(404);
    // An id in the batch's range that no request was given is unknown, and so is the batch's own id.
    expect((await fetchJobStatus(api, merchant, memberJobId(batchIdOf(ids[0] as string), 400))).status).toBe(404);
    expect((await fetchJobStatus(api, merchant, batchIdOf(ids[0] as string))).status).toBe(404);

    // Each waiting request has a key identical requests would share it by; a worker taking the batch frees it.
    const dedupKeys = mine.map((reward) =>
      cancelDedupKey(env.queuePrefix, singleCancelDeduplicationKey(merchant.id, reward)),
    );
    expect(await api.deps.redis.exists(...dedupKeys)).toBe(30);

    const worker = await startTestWorker(env);
    try {
      for (const jobId of [ids[0], ids[29]] as string[]) {
        expect(await waitForJob(api, merchant, jobId)).toMatchObject({
          jobId,
          state: 'completed',
          result: { requested: 1, cancelled: 1, alreadyCancelled: 0, notCancellable: 0, notFound: 0 },
        });
      }
      await waitForJob(api, other, storedOther[4]?.jobId as string);
    } finally {
      await worker.close();
    }
    const carried = await jobsCarrying(ids);
    expect(carried).toHaveLength(30);
    for (const [index, reward] of mine.entries()) {
      expect(carried.find((row) => row.id === reward.id)).toMatchObject({
        status: 'CANCELLED',
        cancellation_job_id: ids[index],
      });
    }
    const audit = await env.db
      .selectFrom('cancellation_jobs')
      .select(['id', 'state', 'outcome', 'operation'])
      .where('id', 'in', ids)
      .execute();
    expect(audit).toHaveLength(30);
    expect(
      audit.every((row) => row.state === 'completed' && row.outcome === 'cancelled' && row.operation === 'cancel'),
    ).toBe(true);
    expect(await api.deps.redis.exists(...dedupKeys)).toBe(0);
    // The finished batch keeps nothing that grows with its size in Redis.
    const batch = await singleQueue().getJob(batchIdOf(ids[0] as string));
    expect(batch?.data).toEqual({ merchantId: merchant.id });
  });

  it(`holds at most ${MAX_BATCH_MEMBERS} requests per queue job`, async () => {
    const rewards = await rewardsFor(merchant, 'many', MAX_BATCH_MEMBERS + 1);
    const stored = await enqueueTogether(
      merchant,
      rewards.map((reward) => reward.id),
    );
    const batches = new Set(stored.map(({ jobId }) => batchIdOf(jobId)));
    expect(batches.size).toBe(2);
    let stored501 = 0;
    for (const batchId of batches) {
      const job = await singleQueue().getJob(batchId);
      expect(job?.name).toBe('cancelBatch');
      const requests = (job?.data as { requests?: unknown[] } | undefined)?.requests ?? [];
      expect(requests.length).toBeGreaterThan(0);
      expect(requests.length).toBeLessThanOrEqual(MAX_BATCH_MEMBERS);
      stored501 += requests.length;
    }
    expect(stored501).toBe(MAX_BATCH_MEMBERS + 1);
  });
});

describe('identical single cancels', { timeout: 60_000 }, () => {
  it('share one job within a batch and while its batch waits, and not once it has started', async () => {
    const [reward] = await rewardsFor(merchant, 'twin', 1);
    const rewardId = reward?.id as string;
    const [first, twin] = await enqueueTogether(merchant, [rewardId, rewardId]);
    expect(twin).toEqual({ jobId: first?.jobId, shared: true });
    expect(first?.shared).toBe(false);
    const later = await requestCancellation(api, merchant, 'cancel', { id: rewardId });
    expect(later).toBe(first?.jobId);

    const worker = await startTestWorker(env);
    try {
      expect((await waitForJob(api, merchant, later)).result?.cancelled).toBe(1);
      const after = await requestCancellation(api, merchant, 'cancel', { id: rewardId });
      expect(after).not.toBe(later);
      expect((await waitForJob(api, merchant, after)).result).toMatchObject({ cancelled: 0, alreadyCancelled: 1 });
    } finally {
      await worker.close();
    }
  });

  it('never share a request that was aborted', async () => {
    const [reward] = await rewardsFor(merchant, 'aborted-twin', 1);
    const first = await requestCancellation(api, merchant, 'cancel', { id: reward?.id });
    const aborted = await api.post('/api/v1/integration/jobs/cancel', signedBody(merchant, { jobId: first }));
    expect(await aborted.json()).toMatchObject({ state: 'cancelled' });
    const again = await requestCancellation(api, merchant, 'cancel', { id: reward?.id });
    expect(again).not.toBe(first);
    const worker = await startTestWorker(env);
    try {
      expect((await waitForJob(api, merchant, again)).result?.cancelled).toBe(1);
    } finally {
      await worker.close();
    }
  });
});

describe('the signed route', () => {
  it('answers each request with its own job id when many arrive at once', async () => {
    const rewards = await rewardsFor(merchant, 'http', 20);
    const answers = await Promise.all(
      rewards.map((reward) => api.post(cancelPaths.cancel, signedBody(merchant, { id: reward.id }))),
    );
    expect(answers.map((answer) => answer.status)).toEqual(rewards.map(() => 200));
    expect(new Set(answers.map((answer) => answer.headers.get('x-job-id'))).size).toBe(20);
  });
});
