import { beforeAll, describe, expect, it } from 'vitest';
import { redeliver, requestCancellation, waitForJob } from '../helpers/cancellation.js';
import { createConfiguration, createMerchant, createRewards, type MerchantFixture } from '../helpers/fixtures.js';
import { useTestContext } from '../helpers/test-context.js';

// Small batches and a low split threshold, so that slicing, batching and fan-out run on small data.
const { env, api, worker } = useTestContext({
  settings: { CANCEL_BATCH_SIZE: '5', FANOUT_THRESHOLD: '6', FANOUT_CHUNK_SIZE: '4' },
  api: true,
  worker: true,
});
let merchant: MerchantFixture;
let other: MerchantFixture;

beforeAll(async () => {
  merchant = await createMerchant(env.db);
  other = await createMerchant(env.db);
});

/** Two configurations of the merchant, `perPlayer` rewards of each for every player, in mixed states. */
async function scenario(prefix: string, players: number, perPlayer: number) {
  const first = await createConfiguration(env.db, {
    merchantId: merchant.id,
    externalId: `${prefix}-cfg-a`,
    startDate: Date.now(),
  });
  const second = await createConfiguration(env.db, {
    merchantId: merchant.id,
    externalId: `${prefix}-cfg-b`,
    startDate: Date.now(),
  });
  const playerIds = Array.from({ length: players }, (_, i) => `${prefix}-p${i}`);
  for (const configuration of [first, second]) {
    await createRewards(env.db, {
      merchantId: merchant.id,
      rewardConfigurationId: configuration.id,
      rewards: playerIds.flatMap((playerId) => Array.from({ length: perPlayer }, () => ({ playerId }))),
    });
  }
  // Per player, one USED and one EXPIRED reward that no cancel may touch.
  await createRewards(env.db, {
    merchantId: merchant.id,
    rewardConfigurationId: first.id,
    rewards: playerIds.flatMap((playerId) => [
      { playerId, status: 'USED' as const },
      { playerId, status: 'EXPIRED' as const },
    ]),
  });
  return { first, second, playerIds };
}

async function countByStatus(playerIds: string[], merchantId = merchant.id) {
  const rows = await env.db
    .selectFrom('rewards')
    .select(['status', 'reward_configuration_id'])
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .where('merchant_id', '=', merchantId)
    .where('player_id', 'in', playerIds)
    .groupBy(['status', 'reward_configuration_id'])
    .execute();
  return rows.map((row) => ({ ...row, count: Number(row.count) }));
}

describe('bulkCancelByQuery', () => {
  it('with no configuration, cancels every ACTIVE reward of the players and nothing else', async () => {
    const { playerIds } = await scenario('all', 3, 4);
    const bystanders = await scenario('bystander', 2, 2);
    const jobId = await requestCancellation(api, merchant, 'bulkCancelByQuery', { playerIds });
    const status = await waitForJob(api, merchant, jobId);
    expect(status.result).toEqual({ players: 3, cancelled: 24 });
    const counts = await countByStatus(playerIds);
    expect(counts.filter((row) => row.status === 'ACTIVE')).toEqual([]);
    expect(counts.filter((row) => row.status === 'USED').reduce((sum, row) => sum + row.count, 0)).toBe(3);
    expect(counts.filter((row) => row.status === 'EXPIRED').reduce((sum, row) => sum + row.count, 0)).toBe(3);
    const untouched = await countByStatus(bystanders.playerIds);
    expect(untouched.filter((row) => row.status === 'CANCELLED')).toEqual([]);
  });

  it('with rewardConfigurationId, cancels only that configuration', async () => {
    const { first, second, playerIds } = await scenario('by-id', 2, 3);
    const jobId = await requestCancellation(api, merchant, 'bulkCancelByQuery', {
      playerIds,
      rewardConfigurationId: first.id,
    });
    expect((await waitForJob(api, merchant, jobId)).result).toEqual({ players: 2, cancelled: 6 });
    const counts = await countByStatus(playerIds);
    expect(counts.find((row) => row.status === 'ACTIVE' && row.reward_configuration_id === second.id)?.count).toBe(6);
    expect(counts.find((row) => row.status === 'ACTIVE' && row.reward_configuration_id === first.id)).toBeUndefined();
  });

  it('with externalRewardConfigurationId, cancels only that configuration', async () => {
    const { second, playerIds } = await scenario('by-ext', 2, 3);
    const jobId = await requestCancellation(api, merchant, 'bulkCancelByQuery', {
      playerIds,
      externalRewardConfigurationId: 'by-ext-cfg-b',
    });
    expect((await waitForJob(api, merchant, jobId)).result).toEqual({ players: 2, cancelled: 6 });
    const counts = await countByStatus(playerIds);
    expect(counts.find((row) => row.status === 'CANCELLED')?.reward_configuration_id).toBe(second.id);
  });

  it('with both ids, a reward must match both: mismatched ids cancel nothing, matching ids cancel that one', async () => {
    const { first, playerIds } = await scenario('both', 2, 2);
    const mismatched = await requestCancellation(api, merchant, 'bulkCancelByQuery', {
      playerIds,
      rewardConfigurationId: first.id,
      externalRewardConfigurationId: 'both-cfg-b',
    });
    expect((await waitForJob(api, merchant, mismatched)).result).toEqual({ players: 2, cancelled: 0 });
    const matching = await requestCancellation(api, merchant, 'bulkCancelByQuery', {
      playerIds,
      rewardConfigurationId: first.id,
      externalRewardConfigurationId: 'both-cfg-a',
    });
    expect((await waitForJob(api, merchant, matching)).result).toEqual({ players: 2, cancelled: 4 });
  });

  it('an unknown configuration gives a job that completes and cancels nothing', async () => {
    const { playerIds } = await scenario('unknown-cfg', 1, 2);
    const jobId = await requestCancellation(api, merchant, 'bulkCancelByQuery', {
      playerIds,
      rewardConfigurationId: '00000000-0000-4000-8000-00000000beef',
    });
    const status = await waitForJob(api, merchant, jobId);
    expect(status).toMatchObject({ state: 'completed', result: { players: 1, cancelled: 0 } });
  });

  it("never cancels another merchant's rewards of players with the same ids", async () => {
    const playerIds = ['shared-player-1', 'shared-player-2'];
    const foreignConfiguration = await createConfiguration(env.db, { merchantId: other.id, startDate: Date.now() });
    await createRewards(env.db, {
      merchantId: other.id,
      rewardConfigurationId: foreignConfiguration.id,
      rewards: playerIds.map((playerId) => ({ playerId })),
    });
    const jobId = await requestCancellation(api, merchant, 'bulkCancelByQuery', { playerIds });
    expect((await waitForJob(api, merchant, jobId)).result).toEqual({ players: 2, cancelled: 0 });
    const foreign = await countByStatus(playerIds, other.id);
    expect(foreign).toEqual([{ status: 'ACTIVE', reward_configuration_id: foreignConfiguration.id, count: 2 }]);
  });

  it('splits many players into parts, sums them, and marks every reward with the merchant job id', async () => {
    const { playerIds } = await scenario('split', 13, 3);
    const jobId = await requestCancellation(api, merchant, 'bulkCancelByQuery', {
      playerIds: [...playerIds, ...playerIds.slice(0, 4)],
    });
    const status = await waitForJob(api, merchant, jobId);
    expect(status.result).toEqual({ players: 13, cancelled: 78 });
    // The parts finished and their results live on in the parent, which sums them.
    const parent = await worker.deps.queues.forShard(null).queues['bulk-cancel'].getJob(jobId);
    const parts = Object.keys((await parent?.getChildrenValues()) ?? {}).filter((key) =>
      key.includes(`${jobId}.part-`),
    );
    expect(parts.length).toBe(4);
    const markedByJob = await env.db
      .selectFrom('rewards')
      .select((eb) => eb.fn.countAll<string>().as('count'))
      .where('cancellation_job_id', '=', jobId)
      .executeTakeFirstOrThrow();
    expect(Number(markedByJob.count)).toBe(78);
  });

  it('runs again without changing anything more', async () => {
    const { playerIds } = await scenario('again', 2, 3);
    const jobId = await requestCancellation(api, merchant, 'bulkCancelByQuery', { playerIds });
    const first = await waitForJob(api, merchant, jobId);
    // At-least-once delivery: the very same job is delivered a second time, as when its worker dies
    // after the last slice committed but before that slice's checkpoint was saved: it carries the
    // checkpoint of the slice before (one player per slice here, 6 rewards each).
    const checkpoint = (await worker.deps.queues.forShard(null).queues['bulk-cancel'].getJob(jobId))?.data.cursor;
    expect(checkpoint).toMatchObject({ playerIndex: 2, cancelled: 12 });
    await redeliver(worker.deps.queues.forShard(null).queues['bulk-cancel'], jobId, 'bulkCancelByQuery', {
      merchantId: merchant.id,
      acceptedAt: Date.now(),
      playerIds,
      cursor: { ...checkpoint, playerIndex: 1, cancelled: 6, picked: 6 },
    });
    const second = await waitForJob(api, merchant, jobId);
    expect(first.result).toEqual({ players: 2, cancelled: 12 });
    // The second run found nothing ACTIVE left, and counted what this job had cancelled before.
    expect(second.result).toEqual({ players: 2, cancelled: 12 });
    const counts = await countByStatus(playerIds);
    expect(counts.filter((row) => row.status === 'CANCELLED').reduce((sum, row) => sum + row.count, 0)).toBe(12);
  });

  it('counts the same when the job is stored again under its id, its start count and checkpoint gone', async () => {
    // One slice (one player): a job with no checkpoint may have committed that slice before, and BullMQ's
    // count of the job's starts begins again with the job stored anew, so the slice is counted from the
    // rewards whatever that count says.
    const { playerIds } = await scenario('stored-again', 1, 3);
    const jobId = await requestCancellation(api, merchant, 'bulkCancelByQuery', { playerIds });
    const first = await waitForJob(api, merchant, jobId);
    await redeliver(worker.deps.queues.forShard(null).queues['bulk-cancel'], jobId, 'bulkCancelByQuery', {
      merchantId: merchant.id,
      acceptedAt: Date.now(),
      playerIds,
    });
    const second = await waitForJob(api, merchant, jobId);
    expect(first.result).toEqual({ players: 1, cancelled: 6 });
    expect(second.result).toEqual({ players: 1, cancelled: 6 });
  });
});
