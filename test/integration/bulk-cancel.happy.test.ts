import { beforeAll, describe, expect, it } from 'vitest';
import { redeliver, requestCancellation, waitForJob } from '../helpers/cancellation.js';
import { createConfiguration, createMerchant, createRewards, type MerchantFixture } from '../helpers/fixtures.js';
import { useTestContext } from '../helpers/test-context.js';

// Small batches and a low split threshold, so that batching and fan-out run on small data.
const { env, api, worker } = useTestContext({
  settings: { CANCEL_BATCH_SIZE: '7', FANOUT_THRESHOLD: '40', FANOUT_CHUNK_SIZE: '15' },
  api: true,
  worker: true,
});
let merchant: MerchantFixture;
let other: MerchantFixture;
let configurationId: string;
let otherConfigurationId: string;

beforeAll(async () => {
  merchant = await createMerchant(env.db);
  other = await createMerchant(env.db);
  configurationId = (await createConfiguration(env.db, { merchantId: merchant.id, startDate: Date.now() })).id;
  otherConfigurationId = (await createConfiguration(env.db, { merchantId: other.id, startDate: Date.now() })).id;
});

async function statuses(ids: string[]) {
  const rows = await env.db
    .selectFrom('rewards')
    .select(['id', 'status', 'cancellation_job_id'])
    .where('id', 'in', ids)
    .execute();
  return new Map(rows.map((row) => [row.id, row]));
}

async function rewardsFor(prefix: string, count: number, merchantId = merchant.id, configuration = configurationId) {
  return createRewards(env.db, {
    merchantId,
    rewardConfigurationId: configuration,
    rewards: Array.from({ length: count }, (_, i) => ({ playerId: `${prefix}-player`, externalId: `${prefix}-${i}` })),
  });
}

describe('bulkCancel', () => {
  it('cancels the rewards matching either list, counting partial matches', async () => {
    const rewards = await rewardsFor('union', 10);
    const byId = rewards.slice(0, 4).map((reward) => reward.id);
    const byExternalId = rewards.slice(4, 8).map((reward) => reward.externalId);
    const missing = ['00000000-0000-4000-8000-000000000001', 'no-such-external-id'];
    const jobId = await requestCancellation(api, merchant, 'bulkCancel', {
      ids: [...byId, missing[0]],
      externalIds: [...byExternalId, missing[1]],
    });
    const status = await waitForJob(api, merchant, jobId);
    expect(status.state).toBe('completed');
    expect(status.result).toEqual({ requested: 10, cancelled: 8, alreadyCancelled: 0, notCancellable: 0, notFound: 2 });

    const rows = await statuses(rewards.map((reward) => reward.id));
    for (const reward of rewards.slice(0, 8)) {
      expect(rows.get(reward.id)).toMatchObject({ status: 'CANCELLED', cancellation_job_id: jobId });
    }
    for (const reward of rewards.slice(8)) expect(rows.get(reward.id)?.status).toBe('ACTIVE');
  });

  it('collapses duplicates and counts a reward named by both lists once', async () => {
    const [reward] = await rewardsFor('dupes', 1);
    const id = reward?.id as string;
    const jobId = await requestCancellation(api, merchant, 'bulkCancel', {
      ids: [id, id, id.toUpperCase()],
      externalIds: [reward?.externalId, reward?.externalId],
    });
    const status = await waitForJob(api, merchant, jobId);
    expect(status.result).toEqual({ requested: 2, cancelled: 1, alreadyCancelled: 0, notCancellable: 0, notFound: 0 });
  });

  it('leaves USED and EXPIRED rewards as they are, and counts the already cancelled', async () => {
    const rewards = await createRewards(env.db, {
      merchantId: merchant.id,
      rewardConfigurationId: configurationId,
      rewards: [
        { playerId: 'mixed', status: 'USED' },
        { playerId: 'mixed', status: 'EXPIRED' },
        { playerId: 'mixed', status: 'CANCELLED' },
        { playerId: 'mixed' },
      ],
    });
    const jobId = await requestCancellation(api, merchant, 'bulkCancel', { ids: rewards.map((reward) => reward.id) });
    const status = await waitForJob(api, merchant, jobId);
    expect(status.result).toEqual({ requested: 4, cancelled: 1, alreadyCancelled: 1, notCancellable: 2, notFound: 0 });
    const rows = await statuses(rewards.map((reward) => reward.id));
    expect(rewards.map((reward) => rows.get(reward.id)?.status)).toEqual(['USED', 'EXPIRED', 'CANCELLED', 'CANCELLED']);
  });

  it("treats another merchant's rewards as not found and leaves them alone", async () => {
    const foreign = await rewardsFor('foreign', 3, other.id, otherConfigurationId);
    const jobId = await requestCancellation(api, merchant, 'bulkCancel', {
      ids: [foreign[0]?.id],
      externalIds: [foreign[1]?.externalId, foreign[2]?.externalId],
    });
    const status = await waitForJob(api, merchant, jobId);
    expect(status.result).toEqual({ requested: 3, cancelled: 0, alreadyCancelled: 0, notCancellable: 0, notFound: 3 });
    const rows = await statuses(foreign.map((reward) => reward.id));
    expect([...rows.values()].every((row) => row.status === 'ACTIVE')).toBe(true);
  });

  it('splits a large list into parts shared by the workers, sums their counts and records the merchant job id', async () => {
    const rewards = await rewardsFor('fanout', 60);
    const jobId = await requestCancellation(api, merchant, 'bulkCancel', {
      ids: rewards.slice(0, 30).map((reward) => reward.id),
      // Overlaps the id list by 5: those are counted once.
      externalIds: [...rewards.slice(25).map((reward) => reward.externalId), 'fanout-missing'],
    });
    const status = await waitForJob(api, merchant, jobId);
    expect(status.result).toEqual({
      requested: 66,
      cancelled: 60,
      alreadyCancelled: 0,
      notCancellable: 0,
      notFound: 1,
    });
    // The parts finished and their results live on in the parent, which sums them.
    const parent = await worker.deps.queues.forShard(null).queues['bulk-cancel'].getJob(jobId);
    expect(
      Object.keys((await parent?.getChildrenValues()) ?? {}).filter((key) => key.includes(`${jobId}.part-`)),
    ).toHaveLength(5);
    const rows = await statuses(rewards.map((reward) => reward.id));
    expect([...rows.values()].every((row) => row.status === 'CANCELLED' && row.cancellation_job_id === jobId)).toBe(
      true,
    );
    const audit = await env.db
      .selectFrom('cancellation_jobs')
      .selectAll()
      .where('id', '=', jobId)
      .executeTakeFirstOrThrow();
    expect(audit).toMatchObject({
      state: 'completed',
      operation: 'bulkCancel',
      requested: 66,
      cancelled: 60,
      not_found: 1,
    });
  });

  it('changes nothing more when the same job runs again, and reports the same counts', async () => {
    const rewards = await rewardsFor('rerun', 9);
    const jobId = await requestCancellation(api, merchant, 'bulkCancel', { ids: rewards.map((reward) => reward.id) });
    const first = await waitForJob(api, merchant, jobId);
    const before = await statuses(rewards.map((reward) => reward.id));

    // At-least-once delivery: the very same job (id and payload) is delivered a second time.
    await redeliver(worker.deps.queues.forShard(null).queues['bulk-cancel'], jobId, 'bulkCancel', {
      merchantId: merchant.id,
      acceptedAt: Date.now(),
      ids: rewards.map((reward) => reward.id),
      externalIds: [],
    });
    const second = await waitForJob(api, merchant, jobId);
    const after = await statuses(rewards.map((reward) => reward.id));

    expect(second.result).toEqual(first.result);
    expect(first.result?.cancelled).toBe(9);
    expect([...after.entries()]).toEqual([...before.entries()]);
  });
});
