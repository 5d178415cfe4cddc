import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../../src/shared/db/client.js';
import { startTestApi, type TestApi } from '../helpers/api.js';
import { cancelPaths, requestCancellation, waitForJob } from '../helpers/cancellation.js';
import {
  createConfiguration,
  createMerchant,
  createRewards,
  type MerchantFixture,
  type RewardFixture,
} from '../helpers/fixtures.js';
import { readMetrics, readsSince } from '../helpers/read-metrics.js';
import { signedBody } from '../helpers/signing.js';
import { useTestContext } from '../helpers/test-context.js';
import { eventually, startTestWorker, type TestWorker } from '../helpers/worker.js';

/**
 * Reads served by the replica keep the tenant boundary of the primary's: a merchant sees only its own
 * configurations, and another merchant's finished job is as unknown as a job that never existed.
 */

const { env } = useTestContext({ settings: { READ_LAG_POLL_MS: '50' } });
let replica: Db;
let api: TestApi;
let worker: TestWorker;
let owner: MerchantFixture;
let other: MerchantFixture;
let rewards: RewardFixture[];

beforeAll(async () => {
  replica = createDb({ connectionString: env.databaseUrl, poolSize: 2, applicationName: 'rewards-test-replica' });
  api = await startTestApi(env, {}, { replica });
  worker = await startTestWorker(env);
  [owner, other] = await Promise.all([createMerchant(env.db), createMerchant(env.db)]);
  const configuration = await createConfiguration(env.db, {
    merchantId: owner.id,
    name: 'Owner only offer',
    startDate: Date.now(),
  });
  rewards = await createRewards(env.db, {
    merchantId: owner.id,
    rewardConfigurationId: configuration.id,
    rewards: [
      { playerId: 'shared-player', externalId: 'owner-r1' },
      { playerId: 'shared-player', externalId: 'owner-r2' },
    ],
  });
  await eventually(async () => ((await metrics()).replicaUp === 1 ? true : undefined), { what: 'the replica check' });
});
afterAll(async () => {
  await worker?.close();
  await api?.close();
  await replica?.destroy();
});

async function metrics() {
  return readMetrics(await (await api.get('/metrics')).text());
}

describe('tenant boundary on replica reads', () => {
  it("another merchant's readAll and dry runs served by the replica see none of the owner's rows", async () => {
    const before = (await metrics()).reads;
    const readAll = await api.post(
      '/api/v1/integration/reward-configurations/readAll',
      signedBody(other, { name: 'owner' }),
    );
    expect(await readAll.json()).toEqual([]);
    const byIds = await api.post(
      cancelPaths.bulkCancel,
      signedBody(other, { ids: rewards.map((reward) => reward.id), dryRun: true }),
    );
    expect(await byIds.json()).toMatchObject({ requested: 2, cancellable: 0, notFound: 2 });
    const byQuery = await api.post(
      cancelPaths.bulkCancelByQuery,
      signedBody(other, { playerIds: ['shared-player'], dryRun: true }),
    );
    expect(await byQuery.json()).toEqual({ players: 1, cancellable: 0 });
    expect(readsSince((await metrics()).reads, before).replica).toMatchObject({ readAll: 1, dryRun: 2 });
  });

  it("another merchant's finished job, read from the replica, is not found by status or rewards", async () => {
    // A single cancel whose batch has finished is answered from its audit row: the replica's here.
    const jobId = await requestCancellation(api, owner, 'cancel', { id: rewards[1]?.id });
    expect((await waitForJob(api, owner, jobId)).state).toBe('completed');
    const before = (await metrics()).reads;
    for (const path of [cancelPaths.jobStatus, '/api/v1/integration/jobs/rewards']) {
      const response = await api.post(path, signedBody(other, { jobId }));
      expect(response.status).toBe(404);
      expect(await response.json()).toMatchObject({ errorCode: 10 });
    }
    const routed = readsSince((await metrics()).reads, before);
    // The replica holds no such row under the asking merchant; a row it lacks may only be lagging, so
    // the primary is asked too, and finds none either.
    expect(routed.replica.jobStatus).toBe(2);
    expect(routed.primary.jobStatus).toBe(2);
  });
});
