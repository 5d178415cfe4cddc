import { beforeAll, describe, expect, it } from 'vitest';
import { redeliver, requestCancellation, waitForJob } from '../helpers/cancellation.js';
import { createConfiguration, createMerchant, createRewards, type MerchantFixture } from '../helpers/fixtures.js';
import { signedBody } from '../helpers/signing.js';
import { useTestContext } from '../helpers/test-context.js';

const path = '/api/v1/integration/jobs/rewards';

// Small batches and a low split threshold: listing must hold across batches and child jobs.
const { env, api, worker } = useTestContext({
  settings: { CANCEL_BATCH_SIZE: '7', FANOUT_THRESHOLD: '40', FANOUT_CHUNK_SIZE: '15' },
  api: true,
  worker: true,
});
let merchant: MerchantFixture;
let configurationId: string;

beforeAll(async () => {
  merchant = await createMerchant(env.db);
  configurationId = (await createConfiguration(env.db, { merchantId: merchant.id, startDate: Date.now() })).id;
});

interface Page {
  rewards: Array<{ id: string; externalId: string | null; playerId: string }>;
  next: string | null;
}

async function page(jobId: string, extra: Record<string, unknown> = {}): Promise<Page> {
  const response = await api.post(path, signedBody(merchant, { jobId, ...extra }));
  expect(response.status).toBe(200);
  return (await response.json()) as Page;
}

async function allPages(jobId: string, limit: number): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = [];
  let after: string | null = null;
  let pages = 0;
  do {
    const current: Page = await page(jobId, { limit, ...(after ? { after } : {}) });
    pages += 1;
    expect(current.rewards.length).toBeLessThanOrEqual(limit);
    ids.push(...current.rewards.map((reward) => reward.id));
    after = current.next;
    if (after) expect(after).toBe(current.rewards.at(-1)?.id);
  } while (after);
  return { ids, pages };
}

/** What the rewards themselves say the job cancelled, in id order. */
async function carrying(jobId: string): Promise<string[]> {
  const rows = await env.db
    .selectFrom('rewards')
    .select('id')
    .where('cancellation_job_id', '=', jobId)
    .orderBy('id')
    .execute();
  return rows.map((row) => row.id);
}

async function rewardsOf(players: string[], perPlayer: number) {
  return createRewards(env.db, {
    merchantId: merchant.id,
    rewardConfigurationId: configurationId,
    rewards: players.flatMap((playerId) =>
      Array.from({ length: perPlayer }, (_, i) => ({ playerId, externalId: `${playerId}-${i}` })),
    ),
  });
}

describe('what a job cancelled', () => {
  it('bulkCancelByQuery split into parts: every reward carrying the job id, once, in id order, page by page', async () => {
    const players = Array.from({ length: 50 }, (_, i) => `listed-${i}`);
    const rewards = await rewardsOf(players, 3);
    // Not cancelled by this job: already used.
    await env.db
      .updateTable('rewards')
      .set({ status: 'USED' })
      .where('id', '=', rewards[0]?.id as string)
      .execute();
    const jobId = await requestCancellation(api, merchant, 'bulkCancelByQuery', { playerIds: players });
    const status = await waitForJob(api, merchant, jobId);
    expect(status.result).toEqual({ players: 50, cancelled: 149 });

    const expected = await carrying(jobId);
    expect(expected).toHaveLength(149);
    const { ids, pages } = await allPages(jobId, 20);
    expect(ids).toEqual(expected);
    expect(pages).toBe(8);

    const first = await page(jobId, { limit: 1 });
    const reward = rewards.find((candidate) => candidate.id === first.rewards[0]?.id);
    expect(first.rewards[0]).toEqual({ id: reward?.id, externalId: reward?.externalId, playerId: reward?.playerId });
  });

  it('bulkCancel and single cancels list their own rewards; the default page holds them all', async () => {
    const rewards = await rewardsOf(['by-ids'], 12);
    const bulkJob = await requestCancellation(api, merchant, 'bulkCancel', {
      ids: rewards.slice(0, 6).map((reward) => reward.id),
      externalIds: [...rewards.slice(4, 10).map((reward) => reward.externalId), 'missing'],
    });
    const singleJob = await requestCancellation(api, merchant, 'cancel', { externalId: rewards[10]?.externalId });
    await waitForJob(api, merchant, bulkJob);
    await waitForJob(api, merchant, singleJob);

    const bulk = await page(bulkJob);
    expect(bulk.next).toBeNull();
    expect(bulk.rewards.map((reward) => reward.id)).toEqual(await carrying(bulkJob));
    expect(bulk.rewards).toHaveLength(10);
    const single = await page(singleJob);
    expect(single).toEqual({
      rewards: [{ id: rewards[10]?.id, externalId: rewards[10]?.externalId, playerId: 'by-ids' }],
      next: null,
    });
  });

  it('a job that cancelled nothing lists nothing; a page after the last id is empty', async () => {
    const jobId = await requestCancellation(api, merchant, 'bulkCancelByQuery', { playerIds: ['nobody'] });
    await waitForJob(api, merchant, jobId);
    expect(await page(jobId)).toEqual({ rewards: [], next: null });

    const [reward] = await rewardsOf(['last-one'], 1);
    const other = await requestCancellation(api, merchant, 'cancel', { id: reward?.id });
    await waitForJob(api, merchant, other);
    expect(await page(other, { after: 'ffffffff-ffff-4fff-bfff-ffffffffffff' })).toEqual({ rewards: [], next: null });
  });

  it('a job delivered twice lists each reward once', async () => {
    const players = ['twice-1', 'twice-2'];
    await rewardsOf(players, 4);
    const jobId = await requestCancellation(api, merchant, 'bulkCancelByQuery', { playerIds: players });
    await waitForJob(api, merchant, jobId);
    const queue = worker.deps.queues.forShard(null).queues['bulk-cancel'];
    const job = await queue.getJob(jobId);
    await redeliver(queue, jobId, 'bulkCancelByQuery', job?.data as Record<string, unknown>);
    await waitForJob(api, merchant, jobId);
    const { ids } = await allPages(jobId, 3);
    expect(ids).toEqual(await carrying(jobId));
    expect(ids).toHaveLength(8);
  });
});
