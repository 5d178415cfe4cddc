import { beforeAll, describe, expect, it } from 'vitest';
import { requestCancellation, waitForJob } from '../helpers/cancellation.js';
import { createConfiguration, createMerchant, createRewards, type MerchantFixture } from '../helpers/fixtures.js';
import { useTestContext } from '../helpers/test-context.js';

const { env, api, worker } = useTestContext({ api: true, worker: true });
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

async function rewardRow(id: string) {
  return env.db.selectFrom('rewards').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

describe('cancel (single)', () => {
  it('cancels an ACTIVE reward by id, recording when and by which job', async () => {
    const [reward] = await createRewards(env.db, {
      merchantId: merchant.id,
      rewardConfigurationId: configurationId,
      rewards: [{ playerId: 'p-1' }],
    });
    const jobId = await requestCancellation(api, merchant, 'cancel', { id: reward?.id });
    const status = await waitForJob(api, merchant, jobId);

    expect(status).toMatchObject({ jobId, operation: 'cancel', state: 'completed', progress: 100, error: null });
    expect(status.result).toEqual({ requested: 1, cancelled: 1, alreadyCancelled: 0, notCancellable: 0, notFound: 0 });
    const row = await rewardRow(reward?.id as string);
    expect(row.status).toBe('CANCELLED');
    expect(row.cancellation_job_id).toBe(jobId);
    expect(row.cancelled_at).toBeInstanceOf(Date);
  });

  it('cancels by externalId', async () => {
    const [reward] = await createRewards(env.db, {
      merchantId: merchant.id,
      rewardConfigurationId: configurationId,
      rewards: [{ playerId: 'p-2', externalId: 'ext-single-1' }],
    });
    const jobId = await requestCancellation(api, merchant, 'cancel', { externalId: 'ext-single-1' });
    expect((await waitForJob(api, merchant, jobId)).result?.cancelled).toBe(1);
    expect((await rewardRow(reward?.id as string)).status).toBe('CANCELLED');
  });

  it('reports already cancelled, not cancellable (USED, EXPIRED) and not found, changing none of them', async () => {
    const rewards = await createRewards(env.db, {
      merchantId: merchant.id,
      rewardConfigurationId: configurationId,
      rewards: [
        { playerId: 'p-3', status: 'CANCELLED' },
        { playerId: 'p-3', status: 'USED' },
        { playerId: 'p-3', status: 'EXPIRED' },
      ],
    });
    const [cancelled, used, expired] = rewards.map((reward) => reward.id);
    const results = [];
    for (const id of [cancelled, used, expired, '00000000-0000-4000-8000-00000000dead']) {
      const jobId = await requestCancellation(api, merchant, 'cancel', { id });
      results.push((await waitForJob(api, merchant, jobId)).result);
    }
    expect(results).toEqual([
      { requested: 1, cancelled: 0, alreadyCancelled: 1, notCancellable: 0, notFound: 0 },
      { requested: 1, cancelled: 0, alreadyCancelled: 0, notCancellable: 1, notFound: 0 },
      { requested: 1, cancelled: 0, alreadyCancelled: 0, notCancellable: 1, notFound: 0 },
      { requested: 1, cancelled: 0, alreadyCancelled: 0, notCancellable: 0, notFound: 1 },
    ]);
    expect((await rewardRow(used as string)).status).toBe('USED');
    expect((await rewardRow(expired as string)).status).toBe('EXPIRED');
    expect((await rewardRow(cancelled as string)).cancellation_job_id).toBeNull();
  });

  it("never touches another merchant's reward: it is not found", async () => {
    const [foreign] = await createRewards(env.db, {
      merchantId: other.id,
      rewardConfigurationId: otherConfigurationId,
      rewards: [{ playerId: 'p-4', externalId: 'shared-ext' }],
    });
    const byId = await requestCancellation(api, merchant, 'cancel', { id: foreign?.id });
    const byExternalId = await requestCancellation(api, merchant, 'cancel', { externalId: 'shared-ext' });
    expect((await waitForJob(api, merchant, byId)).result?.notFound).toBe(1);
    expect((await waitForJob(api, merchant, byExternalId)).result?.notFound).toBe(1);
    expect((await rewardRow(foreign?.id as string)).status).toBe('ACTIVE');
  });

  it('applies many concurrent single cancels together and gets every one right', async () => {
    const rewards = await createRewards(env.db, {
      merchantId: merchant.id,
      rewardConfigurationId: configurationId,
      rewards: Array.from({ length: 300 }, (_, i) => ({ playerId: `bulk-single-${i}`, externalId: `many-${i}` })),
    });
    const jobIds = await Promise.all(
      rewards.map((reward, i) =>
        requestCancellation(
          api,
          merchant,
          'cancel',
          i % 2 === 0 ? { id: reward.id } : { externalId: reward.externalId },
        ),
      ),
    );
    expect(new Set(jobIds).size).toBe(300);
    const statuses = await Promise.all(jobIds.map((jobId) => waitForJob(api, merchant, jobId)));
    expect(statuses.every((status) => status.result?.cancelled === 1)).toBe(true);
    const rows = await env.db
      .selectFrom('rewards')
      .select(['id', 'status', 'cancellation_job_id'])
      .where(
        'id',
        'in',
        rewards.map((reward) => reward.id),
      )
      .execute();
    const jobOf = new Map(rewards.map((reward, i) => [reward.id, jobIds[i]]));
    expect(rows.every((row) => row.status === 'CANCELLED' && row.cancellation_job_id === jobOf.get(row.id))).toBe(true);
    // Coalescing: fewer transactions than jobs (the batch-size histogram counted them).
    const batches = (await worker.deps.metrics.batchSize.get()).values.find(
      (value) => value.metricName === 'gateway_cancel_batch_size_count' && value.labels.operation === 'cancel',
    );
    expect(batches?.value).toBeLessThan(300);
  });

  it('keeps a durable audit row per job', async () => {
    const [reward] = await createRewards(env.db, {
      merchantId: merchant.id,
      rewardConfigurationId: configurationId,
      rewards: [{ playerId: 'p-5' }],
    });
    const jobId = await requestCancellation(api, merchant, 'cancel', { id: reward?.id });
    await waitForJob(api, merchant, jobId);
    const audit = await env.db
      .selectFrom('cancellation_jobs')
      .selectAll()
      .where('id', '=', jobId)
      .executeTakeFirstOrThrow();
    expect(audit).toMatchObject({
      merchant_id: merchant.id,
      operation: 'cancel',
      state: 'completed',
      // A single cancel's counts are its one outcome; the reward it cancelled is on the row.
      outcome: 'cancelled',
      reward_id: reward?.id,
      requested: null,
      error: null,
    });
    expect(audit.finished_at).toBeInstanceOf(Date);
    expect(audit.request_id).toBeTruthy();
  });
});
