import { describe, expect, it } from 'vitest';
import { cancelPaths } from '../helpers/cancellation.js';
import { createConfiguration, createMerchant, createRewards, type MerchantFixture } from '../helpers/fixtures.js';
import { bodyBoundHeaders, signedBody } from '../helpers/signing.js';
import { useTestContext } from '../helpers/test-context.js';
import { eventually } from '../helpers/worker.js';

// A captured version-2 request sent again with its X-Signature spelled otherwise (hex upper-cased, a
// zero before `t`) still verifies: it must find the first request's replay record, not queue a job
// that cancels the rewards granted since.

const { env, api } = useTestContext({ api: true, worker: true });

async function grant(merchant: MerchantFixture, configurationId: string, playerIds: string[]) {
  return createRewards(env.db, {
    merchantId: merchant.id,
    rewardConfigurationId: configurationId,
    rewards: playerIds.map((playerId) => ({ playerId })),
  });
}

async function statusesOf(ids: string[]) {
  const rows = await env.db.selectFrom('rewards').select(['id', 'status']).where('id', 'in', ids).execute();
  return rows.map((row) => row.status);
}

/** Every bulk job of the merchant the queue holds, in any state. */
async function merchantJobIds(merchant: MerchantFixture): Promise<string[]> {
  const jobs = await api.deps.producer.queues
    .forMerchant(merchant.id)
    .queues['bulk-cancel'].getJobs(['completed', 'failed', 'active', 'waiting', 'prioritized', 'delayed']);
  return jobs.filter((job) => job.data.merchantId === merchant.id).map((job) => job.id as string);
}

async function jobState(merchant: MerchantFixture, jobId: string): Promise<string | undefined> {
  const body = JSON.stringify(signedBody(merchant, { jobId }));
  const headers = bodyBoundHeaders(merchant, { method: 'POST', pathWithQuery: cancelPaths.jobStatus, body });
  const response = await api.post(cancelPaths.jobStatus, body, headers);
  return response.status === 200 ? ((await response.json()) as { state: string }).state : undefined;
}

describe('a version-2 bulkCancelByQuery replayed with its X-Signature re-spelled', () => {
  it('answers the first job id as a replay for upper-case hex and a zero-padded t: no second job, the new rewards stay ACTIVE', async () => {
    const merchant = await createMerchant(env.db, { signatureVersion: 2 });
    const configuration = await createConfiguration(env.db, { merchantId: merchant.id, startDate: Date.now() });
    const players = ['respelled-a', 'respelled-b'];
    const first = await grant(merchant, configuration.id, players);

    const body = JSON.stringify(signedBody(merchant, { playerIds: players }));
    const signature = bodyBoundHeaders(merchant, {
      method: 'POST',
      pathWithQuery: cancelPaths.bulkCancelByQuery,
      body,
    })['x-signature'] as string;
    const answered = await api.post(cancelPaths.bulkCancelByQuery, body, { 'x-signature': signature });
    expect(answered.status).toBe(200);
    const jobId = answered.headers.get('x-job-id') as string;
    await eventually(async () => ((await jobState(merchant, jobId)) === 'completed' ? true : undefined), {
      timeoutMs: 30_000,
      what: 'the first job to complete',
    });
    expect(await statusesOf(first.map((reward) => reward.id))).toEqual(['CANCELLED', 'CANCELLED']);
    const granted = await grant(merchant, configuration.id, players);

    const [t, digest] = signature.split(',') as [string, string];
    const spellings = {
      'upper-case hex': `${t},v1=${digest.slice('v1='.length).toUpperCase()}`,
      'zero-padded t': `t=0${t.slice('t='.length)},${digest}`,
      'both at once': `t=00${t.slice('t='.length)},v1=${digest.slice('v1='.length).toUpperCase()}`,
    };
    for (const [spelling, value] of Object.entries(spellings)) {
      expect(value, spelling).not.toBe(signature);
      const replayed = await api.post(cancelPaths.bulkCancelByQuery, body, { 'x-signature': value });
      expect(replayed.status, spelling).toBe(200);
      expect(replayed.headers.get('x-job-id'), spelling).toBe(jobId);
      expect(replayed.headers.get('idempotent-replayed'), spelling).toBe('true');
    }

    // A job is in the queue from the moment its id is answered: nothing new there, nothing cancelled.
    expect(await merchantJobIds(merchant)).toEqual([jobId]);
    expect(await statusesOf(granted.map((reward) => reward.id))).toEqual(['ACTIVE', 'ACTIVE']);
  });
});
