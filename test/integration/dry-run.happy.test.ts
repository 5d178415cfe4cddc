import { beforeAll, describe, expect, it } from 'vitest';
import { cancelPaths, requestCancellation, waitForJob } from '../helpers/cancellation.js';
import { createConfiguration, createMerchant, createRewards, type MerchantFixture } from '../helpers/fixtures.js';
import { signedBody } from '../helpers/signing.js';
import { useTestContext } from '../helpers/test-context.js';
import { startTestWorker } from '../helpers/worker.js';

const { env, api } = useTestContext({ settings: { BULK_MAX_ITEMS: '20' }, api: true });
let merchant: MerchantFixture;
let other: MerchantFixture;
let configurationId: string;
let secondConfigurationId: string;
let otherConfigurationId: string;

beforeAll(async () => {
  merchant = await createMerchant(env.db);
  other = await createMerchant(env.db);
  configurationId = (await createConfiguration(env.db, { merchantId: merchant.id, startDate: Date.now() })).id;
  secondConfigurationId = (await createConfiguration(env.db, { merchantId: merchant.id, startDate: Date.now() })).id;
  otherConfigurationId = (await createConfiguration(env.db, { merchantId: other.id, startDate: Date.now() })).id;
});

async function jobsStored(): Promise<number> {
  const { queues } = api.deps.producer.queues.forShard(null);
  return (await queues.cancel.getJobCountByTypes()) + (await queues['bulk-cancel'].getJobCountByTypes());
}

async function dryRun(path: string, fields: Record<string, unknown>, headers: Record<string, string> = {}) {
  const before = await jobsStored();
  const response = await api.post(path, signedBody(merchant, { ...fields, dryRun: true }), headers);
  expect(response.status).toBe(200);
  expect(response.headers.get('x-job-id')).toBeNull();
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  expect(await jobsStored()).toBe(before);
  return response.json();
}

async function statusesOf(ids: string[]) {
  const rows = await env.db.selectFrom('rewards').select(['id', 'status']).where('id', 'in', ids).execute();
  return new Map(rows.map((row) => [row.id, row.status]));
}

describe('dry run of bulkCancel', () => {
  it('counts what the request would do, as the job would, and changes nothing', async () => {
    const rewards = await createRewards(env.db, {
      merchantId: merchant.id,
      rewardConfigurationId: configurationId,
      rewards: [
        { playerId: 'p', externalId: 'dry-active-1' },
        { playerId: 'p', externalId: 'dry-active-2' },
        { playerId: 'p', externalId: 'dry-both' },
        { playerId: 'p', externalId: 'dry-used', status: 'USED' },
        { playerId: 'p', externalId: 'dry-expired', status: 'EXPIRED' },
        { playerId: 'p', externalId: 'dry-cancelled', status: 'CANCELLED' },
      ],
    });
    const [foreign] = await createRewards(env.db, {
      merchantId: other.id,
      rewardConfigurationId: otherConfigurationId,
      rewards: [{ playerId: 'p', externalId: 'dry-foreign' }],
    });
    const byId = (externalId: string) => rewards.find((reward) => reward.externalId === externalId)?.id as string;
    const fields = {
      // The reward named by both lists counts once; a duplicate (in another case) collapses.
      ids: [byId('dry-active-1'), byId('dry-both'), byId('dry-both').toUpperCase(), byId('dry-used'), foreign?.id],
      externalIds: ['dry-both', 'dry-active-2', 'dry-expired', 'dry-cancelled', 'dry-foreign', 'dry-missing'],
    };
    const preview = await dryRun(cancelPaths.bulkCancel, fields);
    expect(preview).toEqual({ requested: 10, cancellable: 3, alreadyCancelled: 1, notCancellable: 2, notFound: 3 });
    const statuses = await statusesOf(rewards.map((reward) => reward.id));
    expect([...statuses.values()].filter((status) => status === 'ACTIVE')).toHaveLength(3);

    // The real request then does what the dry run said.
    const worker = await startTestWorker(env);
    try {
      const jobId = await requestCancellation(api, merchant, 'bulkCancel', fields);
      const status = await waitForJob(api, merchant, jobId);
      expect(status.result).toEqual({
        requested: 10,
        cancelled: 3,
        alreadyCancelled: 1,
        notCancellable: 2,
        notFound: 3,
      });
    } finally {
      await worker.close();
    }
  });

  it('follows the request rules: an empty or too long list is 400, dryRun must be a boolean', async () => {
    const empty = await api.post(cancelPaths.bulkCancel, signedBody(merchant, { ids: [], dryRun: true }));
    expect(empty.status).toBe(400);
    const tooLong = await api.post(
      cancelPaths.bulkCancel,
      signedBody(merchant, { externalIds: Array.from({ length: 21 }, (_, i) => `x${i}`), dryRun: true }),
    );
    expect(tooLong.status).toBe(400);
    const notBoolean = await api.post(cancelPaths.bulkCancel, signedBody(merchant, { ids: [], dryRun: 'yes' }));
    expect(notBoolean.status).toBe(400);
    expect(((await notBoolean.json()) as { errorMessage: string }).errorMessage).toMatch(/^dryRun:/);
  });

  it('dryRun false (or absent) queues as usual', async () => {
    const response = await api.post(
      cancelPaths.bulkCancel,
      signedBody(merchant, { externalIds: ['dry-false'], dryRun: false }),
    );
    expect(response.status).toBe(200);
    expect(response.headers.get('x-job-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('ignores an Idempotency-Key: the key stays free for the real request', async () => {
    const fields = { externalIds: ['dry-key'] };
    await dryRun(cancelPaths.bulkCancel, fields, { 'Idempotency-Key': 'dry-key' });
    const real = await api.post(cancelPaths.bulkCancel, signedBody(merchant, fields), { 'Idempotency-Key': 'dry-key' });
    expect(real.status).toBe(200);
    expect(real.headers.get('idempotent-replayed')).toBeNull();
    expect(real.headers.get('x-job-id')).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('dry run of bulkCancelByQuery', () => {
  it('counts the ACTIVE rewards of the players (and configuration) and changes nothing', async () => {
    const mine = await createRewards(env.db, {
      merchantId: merchant.id,
      rewardConfigurationId: configurationId,
      rewards: [
        { playerId: 'dq-1' },
        { playerId: 'dq-1' },
        { playerId: 'dq-2' },
        { playerId: 'dq-2', status: 'USED' },
        { playerId: 'dq-2', status: 'CANCELLED' },
        { playerId: 'dq-3' },
      ],
    });
    await createRewards(env.db, {
      merchantId: merchant.id,
      rewardConfigurationId: secondConfigurationId,
      rewards: [{ playerId: 'dq-1' }],
    });
    // Another merchant's player of the same name is not counted.
    await createRewards(env.db, {
      merchantId: other.id,
      rewardConfigurationId: otherConfigurationId,
      rewards: [{ playerId: 'dq-1' }, { playerId: 'dq-1' }],
    });
    const players = ['dq-1', 'dq-2', 'dq-2', 'dq-missing'];
    expect(await dryRun(cancelPaths.bulkCancelByQuery, { playerIds: players })).toEqual({ players: 3, cancellable: 4 });
    expect(
      await dryRun(cancelPaths.bulkCancelByQuery, { playerIds: players, rewardConfigurationId: configurationId }),
    ).toEqual({ players: 3, cancellable: 3 });
    expect(
      await dryRun(cancelPaths.bulkCancelByQuery, { playerIds: players, rewardConfigurationId: otherConfigurationId }),
    ).toEqual({ players: 3, cancellable: 0 });
    const statuses = await statusesOf(mine.map((reward) => reward.id));
    expect([...statuses.values()]).toEqual(expect.arrayContaining(['ACTIVE', 'USED', 'CANCELLED']));
    expect([...statuses.values()].filter((status) => status === 'ACTIVE')).toHaveLength(4);
  });
});
