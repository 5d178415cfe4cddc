import { describe, expect, it } from 'vitest';
import { signatureReplayKey } from '../../src/shared/redis/redis-keys.js';
import { cancelPaths } from '../helpers/cancellation.js';
import { createConfiguration, createMerchant, createRewards, type MerchantFixture } from '../helpers/fixtures.js';
import { bodyBoundHeaders, signedBody } from '../helpers/signing.js';
import { useTestContext } from '../helpers/test-context.js';
import { eventually } from '../helpers/worker.js';

// A version-2 request sent again within its window (the same X-Signature) is a retry: the first answer,
// the same job, whatever happened since. Version-1 POSTs stay unbound to their body, so concurrent
// clients that sign several requests in one millisecond keep working.

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

/** A version-2 merchant's job status: its requests carry X-Signature too. */
async function v2JobState(merchant: MerchantFixture, jobId: string): Promise<string | undefined> {
  const body = JSON.stringify(signedBody(merchant, { jobId }));
  const headers = bodyBoundHeaders(merchant, { method: 'POST', pathWithQuery: cancelPaths.jobStatus, body });
  const response = await api.post(cancelPaths.jobStatus, body, headers);
  return response.status === 200 ? ((await response.json()) as { state: string }).state : undefined;
}

/** Every bulk job of the merchant the queue holds, in any state. */
async function merchantJobIds(merchant: MerchantFixture): Promise<string[]> {
  const jobs = await api.deps.producer.queues
    .forMerchant(merchant.id)
    .queues['bulk-cancel'].getJobs(['completed', 'failed', 'active', 'waiting', 'prioritized', 'delayed']);
  return jobs.filter((job) => job.data.merchantId === merchant.id).map((job) => job.id as string);
}

describe('a version-2 bulkCancelByQuery replayed within its window', () => {
  it('answers the first job id after that job completed and new rewards were granted: the new rewards stay ACTIVE', async () => {
    const merchant = await createMerchant(env.db, { signatureVersion: 2 });
    const configuration = await createConfiguration(env.db, { merchantId: merchant.id, startDate: Date.now() });
    const players = ['replay-a', 'replay-b'];
    const first = await grant(merchant, configuration.id, players);

    const body = JSON.stringify(signedBody(merchant, { playerIds: players }));
    const headers = bodyBoundHeaders(merchant, { method: 'POST', pathWithQuery: cancelPaths.bulkCancelByQuery, body });
    const answered = await api.post(cancelPaths.bulkCancelByQuery, body, headers);
    expect(answered.status).toBe(200);
    const jobId = answered.headers.get('x-job-id') as string;
    expect(jobId).toMatch(/^[0-9a-f-]{36}$/);
    expect(answered.headers.get('idempotent-replayed')).toBeNull();
    await eventually(async () => ((await v2JobState(merchant, jobId)) === 'completed' ? true : undefined), {
      timeoutMs: 30_000,
      what: 'the job to complete',
    });
    expect(await statusesOf(first.map((reward) => reward.id))).toEqual(['CANCELLED', 'CANCELLED']);

    const granted = await grant(merchant, configuration.id, players);
    const replayed = await api.post(cancelPaths.bulkCancelByQuery, body, headers);
    expect(replayed.status).toBe(200);
    expect(replayed.headers.get('x-job-id')).toBe(jobId);
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');

    // Nothing new in the queue (a job is there from the moment its id is answered), and nothing cancelled.
    expect(await merchantJobIds(merchant)).toEqual([jobId]);
    expect(await statusesOf(granted.map((reward) => reward.id))).toEqual(['ACTIVE', 'ACTIVE']);
  });

  it('answers the first job id with another Idempotency-Key header (the header is not signed)', async () => {
    const merchant = await createMerchant(env.db, { signatureVersion: 2 });
    const body = JSON.stringify(signedBody(merchant, { playerIds: ['header-swap'] }));
    const headers = bodyBoundHeaders(merchant, { method: 'POST', pathWithQuery: cancelPaths.bulkCancelByQuery, body });
    const first = await api.post(cancelPaths.bulkCancelByQuery, body, { ...headers, 'Idempotency-Key': 'k-1' });
    expect(first.status).toBe(200);
    const swapped = await api.post(cancelPaths.bulkCancelByQuery, body, { ...headers, 'Idempotency-Key': 'k-2' });
    expect(swapped.status).toBe(200);
    expect(swapped.headers.get('x-job-id')).toBe(first.headers.get('x-job-id'));
    expect(swapped.headers.get('idempotent-replayed')).toBe('true');
  });

  it('keeps its record under the merchant own keys until the window ends, by a digest (never the signature)', async () => {
    const merchant = await createMerchant(env.db, { signatureVersion: 2 });
    const t = Date.now();
    const body = JSON.stringify(signedBody(merchant, { externalIds: ['digest-only'] }, t));
    const headers = bodyBoundHeaders(merchant, { method: 'POST', pathWithQuery: cancelPaths.bulkCancel, body }, { t });
    expect((await api.post(cancelPaths.bulkCancel, body, headers)).status).toBe(200);
    const keys = await api.deps.redis.keys(signatureReplayKey(env.queuePrefix, merchant.id, '*'));
    expect(keys).toHaveLength(1);
    const digest = (headers['x-signature'] as string).split('v1=')[1] as string;
    const key = keys[0] as string;
    expect(key).not.toContain(digest);
    expect(await api.deps.redis.get(key)).not.toContain(digest);
    const expiresAt = await api.deps.redis.pexpiretime(key);
    expect(expiresAt).toBeGreaterThan(Date.now());
    expect(expiresAt).toBeLessThanOrEqual(t + env.config.SIGNATURE_WINDOW_MS + 1);
  });
});

describe('version-1 requests signed in the same millisecond', () => {
  it('are both served when their bodies differ (v1 POSTs are not bound to their body)', async () => {
    const merchant = await createMerchant(env.db);
    const now = Date.now();
    const [one, two] = await Promise.all([
      api.post(cancelPaths.bulkCancelByQuery, signedBody(merchant, { playerIds: ['same-ms-1'] }, now)),
      api.post(cancelPaths.bulkCancelByQuery, signedBody(merchant, { playerIds: ['same-ms-2'] }, now)),
    ]);
    expect(one.status).toBe(200);
    expect(two.status).toBe(200);
    expect(one.headers.get('x-job-id')).not.toBe(two.headers.get('x-job-id'));
  });
});
