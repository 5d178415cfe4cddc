import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../../src/shared/db/client.js';
import { startTestApi, type TestApi } from '../helpers/api.js';
import { cancelPaths, requestCancellation, waitForJob } from '../helpers/cancellation.js';
import {
  createConfiguration,
  createMerchant,
  createRewards,
  createSession,
  type MerchantFixture,
  type RewardFixture,
} from '../helpers/fixtures.js';
import { type ReadsByPool, readMetrics, readsSince } from '../helpers/read-metrics.js';
import { signedBody } from '../helpers/signing.js';
import { useTestContext } from '../helpers/test-context.js';
import { eventually } from '../helpers/worker.js';

/**
 * The read router with a replica that keeps up: a second pool on the file's own database (not in
 * recovery, so nothing to replay, lag 0). Lag-tolerant reads go to it and answer as the primary would;
 * /betSlip and the cancels stay on the primary. The real standby is test/e2e/read-replica.e2e.test.ts.
 */

const { env } = useTestContext({ settings: { READ_LAG_POLL_MS: '50' }, worker: true });
let replica: Db;
// Started by this file, not by the context: its replica pool opens on the file's database, which exists
// only once the context's beforeAll has run.
let api: TestApi;
let merchant: MerchantFixture;
let rewards: RewardFixture[];

beforeAll(async () => {
  replica = createDb({ connectionString: env.databaseUrl, poolSize: 2, applicationName: 'rewards-test-replica' });
  api = await startTestApi(env, {}, { replica });
  merchant = await createMerchant(env.db);
  const configuration = await createConfiguration(env.db, {
    merchantId: merchant.id,
    name: 'Replica weekend',
    startDate: Date.now(),
  });
  rewards = await createRewards(env.db, {
    merchantId: merchant.id,
    rewardConfigurationId: configuration.id,
    rewards: Array.from({ length: 6 }, (_, i) => ({ playerId: `happy-p${i % 3}`, externalId: `happy-r${i}` })),
  });
  await eventually(async () => ((await metrics()).replicaUp === 1 ? true : undefined), { what: 'the replica check' });
});
afterAll(async () => {
  await api?.close();
  await replica?.destroy();
});

async function metrics() {
  return readMetrics(await (await api.get('/metrics')).text());
}

async function reads(): Promise<ReadsByPool> {
  return (await metrics()).reads;
}

const post = (path: string, fields: Record<string, unknown>) => api.post(path, signedBody(merchant, fields));

describe('read replica that keeps up', () => {
  it('reports it up with no lag', async () => {
    expect(await metrics()).toMatchObject({ replicaUp: 1, replicaLagSeconds: 0 });
  });

  it('serves readAll and both dry runs from the replica, with the answers of the primary', async () => {
    const before = await reads();
    const readAll = await post('/api/v1/integration/reward-configurations/readAll', { name: 'weekend' });
    expect(readAll.status).toBe(200);
    expect(((await readAll.json()) as { name: string }[]).map((c) => c.name)).toEqual(['Replica weekend']);
    const byIds = await post(cancelPaths.bulkCancel, { externalIds: ['happy-r0', 'happy-r1', 'nope'], dryRun: true });
    expect(await byIds.json()).toEqual({
      requested: 3,
      cancellable: 2,
      alreadyCancelled: 0,
      notCancellable: 0,
      notFound: 1,
    });
    const byQuery = await post(cancelPaths.bulkCancelByQuery, { playerIds: ['happy-p0'], dryRun: true });
    expect(await byQuery.json()).toEqual({ players: 1, cancellable: 2 });
    const routed = readsSince(await reads(), before);
    expect(routed.replica).toMatchObject({ readAll: 1, dryRun: 2 });
    expect(routed.primary).toMatchObject({ readAll: 0, dryRun: 0, merchant: 3 });
  });

  it("answers a finished job's status and its rewards pages from the replica", async () => {
    const single = await requestCancellation(api, merchant, 'cancel', { id: rewards[5]?.id });
    const bulk = await requestCancellation(api, merchant, 'bulkCancel', { externalIds: ['happy-r3', 'happy-r4'] });
    await waitForJob(api, merchant, single);
    await waitForJob(api, merchant, bulk);
    const before = await reads();
    // A single cancel whose batch has finished is answered from its audit row.
    const status = await post(cancelPaths.jobStatus, { jobId: single });
    expect(await status.json()).toMatchObject({ jobId: single, state: 'completed', result: { cancelled: 1 } });
    const page = await post('/api/v1/integration/jobs/rewards', { jobId: bulk });
    expect(page.status).toBe(200);
    const listed = ((await page.json()) as { rewards: { externalId: string }[] }).rewards.map((r) => r.externalId);
    expect(listed.sort()).toEqual(['happy-r3', 'happy-r4']);
    const routed = readsSince(await reads(), before);
    expect(routed.replica).toMatchObject({ jobStatus: 1, jobRewards: 1 });
    expect(routed.primary).toMatchObject({ jobStatus: 0, jobRewards: 0 });
  });

  it('keeps /betSlip and the cancels off the read router: they read and write the primary', async () => {
    const session = await createSession(env.db, { merchantId: merchant.id, playerId: 'happy-bettor' });
    const before = await reads();
    const betSlip = await api.post('/betSlip', signedBody(merchant, { authToken: session.token }));
    expect(betSlip.status).toBe(200);
    await requestCancellation(api, merchant, 'cancel', { id: rewards[2]?.id });
    const routed = readsSince(await reads(), before);
    expect(Object.values(routed.replica).every((count) => count === 0)).toBe(true);
    expect(routed.primary).toMatchObject({ readAll: 0, dryRun: 0, jobStatus: 0, jobRewards: 0, merchant: 2 });
  });
});
