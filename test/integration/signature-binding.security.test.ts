import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { urlSignatureKey } from '../../src/shared/redis/redis-keys.js';
import { cancelPaths, waitForJob } from '../helpers/cancellation.js';
import { createConfiguration, createMerchant, createRewards, createSession } from '../helpers/fixtures.js';
import { type MerchantCredentials, signedBody } from '../helpers/signing.js';
import { useTestContext } from '../helpers/test-context.js';

// A version-1 signature (merchantId + timestamp only) read from a logged GET /betSlip URL must not sign
// anything else: the URL binds its triple for the signature's window (docs/design.md, "Threat model").

const { env, api } = useTestContext({ api: true, worker: true });

async function expectUnsigned(response: Response): Promise<void> {
  expect(response.status).toBe(401);
  expect(response.headers.get('x-job-id')).toBeNull();
  expect(await response.json()).toMatchObject({ errorCode: 2 });
}

/** A GET /betSlip as a version-1 merchant sends it (and as a proxy logs it): the triple is in the URL. */
async function servedBetSlip(merchant: MerchantCredentials) {
  const session = await createSession(env.db, { merchantId: merchant.id, playerId: `player-${randomUUID()}` });
  const fields = signedBody(merchant, { authToken: session.token });
  const query = new URLSearchParams(Object.entries(fields).map(([key, value]): [string, string] => [key, `${value}`]));
  const url = `/betSlip?${query}`;
  const served = await api.get(url);
  expect(served.status).toBe(200);
  expect(await served.json()).toMatchObject({ errorCode: 0 });
  return { url, triple: { merchantId: merchant.id, timestamp: fields.timestamp, hash: fields.hash as string } };
}

async function jobsQueued(): Promise<number> {
  let total = 0;
  for (const shard of api.deps.producer.queues.list()) {
    const counts = await shard.queues['bulk-cancel'].getJobCounts();
    total += Object.values(counts).reduce((sum, count) => sum + count, 0);
  }
  return total;
}

describe('a version-1 triple seen in a GET /betSlip URL', () => {
  it('cannot sign a bulkCancelByQuery: 401 errorCode 2, nothing queued, the rewards untouched', async () => {
    const merchant = await createMerchant(env.db);
    const configuration = await createConfiguration(env.db, { merchantId: merchant.id, startDate: Date.now() });
    const players = ['victim-1', 'victim-2'];
    const rewards = await createRewards(env.db, {
      merchantId: merchant.id,
      rewardConfigurationId: configuration.id,
      rewards: players.map((playerId) => ({ playerId })),
    });
    const { triple } = await servedBetSlip(merchant);
    const before = await jobsQueued();

    await expectUnsigned(await api.post(cancelPaths.bulkCancelByQuery, { ...triple, playerIds: players }));
    // Also with the hash spelled otherwise (upper case), which the verifier accepts as the same digest.
    const upper = { ...triple, hash: triple.hash.toUpperCase() };
    await expectUnsigned(await api.post(cancelPaths.bulkCancelByQuery, { ...upper, playerIds: players }));

    // A legitimate cancel of another player runs to its end: had a forged job been queued, it would have run too.
    const control = await api.post(cancelPaths.bulkCancelByQuery, signedBody(merchant, { playerIds: ['other'] }));
    expect(control.status).toBe(200);
    expect(await jobsQueued()).toBe(before + 1);
    await waitForJob(api, merchant, control.headers.get('x-job-id') as string);
    const statuses = await env.db
      .selectFrom('rewards')
      .select('status')
      .where(
        'id',
        'in',
        rewards.map((reward) => reward.id),
      )
      .execute();
    expect(statuses.map((row) => row.status)).toEqual(['ACTIVE', 'ACTIVE']);
  });

  it('cannot sign the other merchant routes (cancel, abort, readAll, job status)', async () => {
    const merchant = await createMerchant(env.db);
    const { triple } = await servedBetSlip(merchant);
    await expectUnsigned(await api.post(cancelPaths.cancel, { ...triple, externalId: 'r-1' }));
    await expectUnsigned(await api.post(cancelPaths.bulkCancel, { ...triple, externalIds: ['r-1'] }));
    await expectUnsigned(await api.post('/api/v1/integration/jobs/cancel', { ...triple, jobId: randomUUID() }));
    await expectUnsigned(await api.post('/api/v1/integration/reward-configurations/readAll', triple));
    await expectUnsigned(await api.post('/api/v1/integration/jobs/status', { ...triple, jobId: randomUUID() }));
  });

  it('still signs POST /betSlip, which answers exactly what a GET /betSlip with the triple may be given', async () => {
    const merchant = await createMerchant(env.db);
    const { triple } = await servedBetSlip(merchant);
    const session = await createSession(env.db, { merchantId: merchant.id, playerId: `player-${randomUUID()}` });
    const post = await api.post('/betSlip', { ...triple, authToken: session.token });
    expect(post.status).toBe(200);
    expect(await post.json()).toMatchObject({ errorCode: 0, playerId: session.playerId });
    const get = await api.get(
      `/betSlip?${new URLSearchParams({ ...triple, timestamp: `${triple.timestamp}`, authToken: session.token })}`,
    );
    expect(await get.json()).toMatchObject({ errorCode: 0, playerId: session.playerId });
  });

  it('still serves GET /betSlip: the same URL again, and other players signed in the same millisecond', async () => {
    const merchant = await createMerchant(env.db);
    const { url, triple } = await servedBetSlip(merchant);
    const again = await api.get(url);
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({ errorCode: 0 });
    const session = await createSession(env.db, { merchantId: merchant.id, playerId: `player-${randomUUID()}` });
    const other = new URLSearchParams({ ...triple, timestamp: `${triple.timestamp}`, authToken: session.token });
    const otherPlayer = await api.get(`/betSlip?${other}`);
    expect(otherPlayer.status).toBe(200);
    expect(await otherPlayer.json()).toMatchObject({ errorCode: 0, playerId: session.playerId });
  });

  it('is kept under the merchant own keys until the signature window ends, and never stores the hash', async () => {
    const merchant = await createMerchant(env.db);
    const { triple } = await servedBetSlip(merchant);
    const keys = await api.deps.redis.keys(urlSignatureKey(env.queuePrefix, merchant.id, '*'));
    expect(keys).toHaveLength(1);
    const key = keys[0] as string;
    expect(key).not.toContain(triple.hash);
    expect(await api.deps.redis.get(key)).not.toContain(triple.hash);
    const expiresAt = await api.deps.redis.pexpiretime(key);
    expect(expiresAt).toBeGreaterThan(Date.now());
    expect(expiresAt).toBeLessThanOrEqual(Number(triple.timestamp) + env.config.SIGNATURE_WINDOW_MS + 1);
  });

  it("does not bind another merchant's requests", async () => {
    const first = await createMerchant(env.db);
    const second = await createMerchant(env.db);
    await servedBetSlip(first);
    const response = await api.post(cancelPaths.cancel, signedBody(second, { externalId: 'theirs' }));
    expect(response.status).toBe(200);
  });
});
