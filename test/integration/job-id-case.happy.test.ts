import { sql } from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import { isAbortRequested } from '../../src/shared/jobs/job-abort.js';
import { requestCancellation, waitForJob } from '../helpers/cancellation.js';
import { createConfiguration, createMerchant, createRewards, type MerchantFixture } from '../helpers/fixtures.js';
import { lockRewards } from '../helpers/row-locks.js';
import { signedBody } from '../helpers/signing.js';
import { useTestContext } from '../helpers/test-context.js';
import { eventually } from '../helpers/worker.js';

/**
 * Job ids are case-insensitive UUIDs: a caller that sends one back in upper case (a logging system, a
 * spreadsheet, a language whose UUID type prints upper case) acts on the job the lower-case id names.
 * Before, the abort route wrote its mark under the id as sent, which the worker (reading the lower-case
 * id) never saw: the job ran to the end although the abort was answered 200.
 */

// Batches of 10 rewards (one player's), so that a running job can be held between two of them.
const { env, api } = useTestContext({
  settings: { CANCEL_BATCH_SIZE: '10', WORKER_BULK_CONCURRENCY: '1' },
  api: true,
  worker: true,
});
let merchant: MerchantFixture;
let configurationId: string;

beforeAll(async () => {
  merchant = await createMerchant(env.db);
  configurationId = (await createConfiguration(env.db, { merchantId: merchant.id, startDate: Date.now() })).id;
});

const post = (path: string, fields: Record<string, unknown>) =>
  api.post(`/api/v1/integration/jobs/${path}`, signedBody(merchant, fields));

async function carryingJob(jobId: string): Promise<number> {
  const result = await sql<{ count: number }>`
    SELECT count(*)::int AS count FROM rewards WHERE cancellation_job_id = ${jobId}::uuid AND status = 'CANCELLED'
  `.execute(env.db);
  return result.rows[0]?.count ?? 0;
}

describe('a job id sent in upper case', { timeout: 60_000 }, () => {
  it('aborts the running job: the worker reads the abort mark and the job ends cancelled', async () => {
    const playerIds = Array.from({ length: 6 }, (_, i) => `case-abort-p${i}`);
    const rewards = await createRewards(env.db, {
      merchantId: merchant.id,
      rewardConfigurationId: configurationId,
      rewards: playerIds.flatMap((playerId) => Array.from({ length: 10 }, () => ({ playerId }))),
    });
    // The job blocks on the 4th player's rewards (sorted order), after 3 players (30 rewards) are done.
    const held = await lockRewards(
      env.databaseUrl,
      rewards.filter((reward) => reward.playerId === playerIds[3]).map((reward) => reward.id),
    );
    try {
      const jobId = await requestCancellation(api, merchant, 'bulkCancelByQuery', { playerIds });
      await eventually(async () => ((await carryingJob(jobId)) === 30 ? true : undefined), { what: '3 players done' });

      const response = await post('cancel', { jobId: jobId.toUpperCase() });
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({ jobId, state: 'cancelling' });
      // The mark is under the id the worker reads, not under the spelling sent.
      expect(await isAbortRequested(api.deps.redis, api.deps.shards, jobId)).toBe(true);
      await held.release();

      const status = await waitForJob(api, merchant, jobId);
      expect(status.state).toBe('cancelled');
      // The batch in flight (the 4th player) committed; nothing after it ran.
      expect(await carryingJob(jobId)).toBe(40);
    } finally {
      await held.release();
    }
  });

  it('finds the job in jobs/status, jobs/rewards, jobs/unapplied and the admin job view', async () => {
    await createRewards(env.db, {
      merchantId: merchant.id,
      rewardConfigurationId: configurationId,
      rewards: [{ playerId: 'case-read', externalId: 'case-read-1' }],
    });
    const jobId = await requestCancellation(api, merchant, 'bulkCancel', {
      externalIds: ['case-read-1', 'case-read-missing'],
    });
    await waitForJob(api, merchant, jobId);
    const upper = jobId.toUpperCase();

    const status = await post('status', { jobId: upper });
    expect(status.status).toBe(200);
    expect(await status.json()).toMatchObject({ jobId, state: 'completed', result: { cancelled: 1, notFound: 1 } });

    // The rewards are listed once the job has written them down (409 until then).
    const rewards = await eventually(async () => {
      const page = await post('rewards', { jobId: upper });
      return page.status === 200 ? ((await page.json()) as { rewards: Array<{ externalId: string }> }) : undefined;
    });
    expect(rewards.rewards.map((reward) => reward.externalId)).toEqual(['case-read-1']);

    const unapplied = await post('unapplied', { jobId: upper });
    expect(unapplied.status).toBe(200);
    expect(await unapplied.json()).toMatchObject({
      identifiers: [{ kind: 'externalId', identifier: 'case-read-missing', outcome: 'notFound' }],
    });

    const adminView = await fetch(`${api.adminUrl}/admin/v1/jobs/${upper}`, {
      headers: { authorization: `Bearer ${env.config.ADMIN_TOKEN}` },
    });
    expect(adminView.status).toBe(200);
    expect(await adminView.json()).toMatchObject({ jobId, merchantId: merchant.id, state: 'completed' });
  });
});
