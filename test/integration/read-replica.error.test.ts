import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createReadRouter } from '../../src/api/api-deps.js';
import { loadConfig } from '../../src/shared/config/config.js';
import { createDb, type Db } from '../../src/shared/db/client.js';
import { createLogger } from '../../src/shared/telemetry/logger.js';
import { Metrics } from '../../src/shared/telemetry/metrics.js';
import { startTestApi, type TestApi } from '../helpers/api.js';
import { cancelPaths, requestCancellation, waitForJob } from '../helpers/cancellation.js';
import { createTestEnvironment, type TestEnvironment } from '../helpers/environment.js';
import {
  createConfiguration,
  createMerchant,
  createRewards,
  type MerchantFixture,
  type RewardFixture,
} from '../helpers/fixtures.js';
import { type ReadsByPool, readMetrics, readsSince } from '../helpers/read-metrics.js';
import { signedBody } from '../helpers/signing.js';
import { serverOf, startTcpProxy, type TcpProxy, throughProxy } from '../helpers/tcp-proxy.js';
import { useTestContext } from '../helpers/test-context.js';
import { eventually } from '../helpers/worker.js';

/**
 * A replica that fails the reads sent to it: one that stops answering (its reads go to the primary),
 * and one that answers but has not seen the latest writes (a job's end it lacks is read on the
 * primary). The second is a database of its own with the schema and none of the rows: to the router
 * it is a replica with no lag, which is the worst case of a replica a moment behind.
 */

const { env } = useTestContext({ settings: { READ_LAG_POLL_MS: '50' }, worker: true });
let behindEnv: TestEnvironment;
let merchant: MerchantFixture;
let rewards: RewardFixture[];
const opened: { api: TestApi; replica: Db }[] = [];
const proxies: TcpProxy[] = [];

beforeAll(async () => {
  behindEnv = await createTestEnvironment();
  merchant = await createMerchant(env.db);
  const configuration = await createConfiguration(env.db, {
    merchantId: merchant.id,
    name: 'Errors offer',
    startDate: Date.now(),
  });
  rewards = await createRewards(env.db, {
    merchantId: merchant.id,
    rewardConfigurationId: configuration.id,
    rewards: Array.from({ length: 4 }, (_, i) => ({ playerId: `error-p${i}`, externalId: `error-r${i}` })),
  });
});
afterAll(async () => {
  for (const { api, replica } of opened) {
    await api.close();
    await replica.destroy();
  }
  for (const proxy of proxies) await proxy.close();
  await behindEnv?.close();
});

async function apiWithReplica(connectionString: string): Promise<TestApi> {
  const replica = createDb({
    connectionString,
    poolSize: 2,
    applicationName: 'rewards-test-replica',
    connectTimeoutMs: 300,
  });
  const api = await startTestApi(env, {}, { replica });
  opened.push({ api, replica });
  return api;
}

async function metricsOf(api: TestApi) {
  return readMetrics(await (await api.get('/metrics')).text());
}

async function readsOf(api: TestApi): Promise<ReadsByPool> {
  return (await metricsOf(api)).reads;
}

describe('a replica that stops answering', () => {
  it('is reported down, and every read answers from the primary', async () => {
    const proxy = await startTcpProxy(serverOf(env.databaseUrl));
    proxies.push(proxy);
    const api = await apiWithReplica(throughProxy(env.databaseUrl, proxy));
    await eventually(async () => ((await metricsOf(api)).replicaUp === 1 ? true : undefined), {
      what: 'the replica check',
    });
    const readAllBody = () => signedBody(merchant, { name: 'errors' });
    const path = '/api/v1/integration/reward-configurations/readAll';
    expect((await api.post(path, readAllBody())).status).toBe(200);

    // The replica's server goes away: open connections cut, new ones refused.
    await proxy.refuse();
    proxy.cut();
    const before = await readsOf(api);
    const readAll = await api.post(path, readAllBody());
    expect(readAll.status).toBe(200);
    expect(await readAll.json()).toHaveLength(1);
    const dryRun = await api.post(
      cancelPaths.bulkCancelByQuery,
      signedBody(merchant, { playerIds: ['error-p0'], dryRun: true }),
    );
    expect(dryRun.status).toBe(200);
    expect(await dryRun.json()).toEqual({ players: 1, cancellable: 1 });
    const routed = readsSince(await readsOf(api), before);
    expect(routed.primary).toMatchObject({ readAll: 1, dryRun: 1 });
    expect(routed.replica).toMatchObject({ readAll: 0, dryRun: 0 });
    expect(await metricsOf(api)).toMatchObject({ replicaUp: 0, replicaLagSeconds: -1 });
  });
});

describe('a replica that has not seen the latest writes', () => {
  it("reads a finished job's status and its rewards pages on the primary when the replica lacks the job's end", async () => {
    const api = await apiWithReplica(behindEnv.databaseUrl);
    await eventually(async () => ((await metricsOf(api)).replicaUp === 1 ? true : undefined), {
      what: 'the replica check',
    });
    const single = await requestCancellation(api, merchant, 'cancel', { id: rewards[0]?.id });
    const bulk = await requestCancellation(api, merchant, 'bulkCancel', { externalIds: ['error-r1', 'error-r2'] });
    const finished = await waitForJob(api, merchant, single);
    await waitForJob(api, merchant, bulk);
    const before = await readsOf(api);

    const status = await api.post(cancelPaths.jobStatus, signedBody(merchant, { jobId: single }));
    expect(status.status).toBe(200);
    expect(await status.json()).toEqual(finished);
    const page = await api.post('/api/v1/integration/jobs/rewards', signedBody(merchant, { jobId: bulk }));
    expect(page.status).toBe(200);
    const listed = ((await page.json()) as { rewards: { externalId: string }[] }).rewards.map((r) => r.externalId);
    expect(listed.sort()).toEqual(['error-r1', 'error-r2']);

    // Each was asked of the replica first, which could not settle it, then answered by the primary.
    const routed = readsSince(await readsOf(api), before);
    expect(routed.primary).toMatchObject({ jobStatus: 1, jobRewards: 1 });
    expect(routed.replica).toMatchObject({ jobStatus: 1, jobRewards: 1 });
  });
});

describe('a replica read cancelled by a recovery conflict', () => {
  it('is asked of the primary, and the replica is not taken for down', async () => {
    const metrics = new Metrics({ collectDefaults: false, processName: 'api' });
    const replica = createDb({
      connectionString: env.databaseUrl,
      poolSize: 1,
      applicationName: 'rewards-test-replica',
    });
    const router = createReadRouter(env.config, createLogger({ level: 'silent', name: 't' }), metrics, env.db, replica);
    try {
      const up = async () => (await metrics.replicaUp.get()).values[0]?.value;
      await eventually(async () => ((await up()) === 1 ? true : undefined), { what: 'the replica check' });
      const asked: string[] = [];
      const answer = await router.read('readAll', async (db, pool) => {
        asked.push(pool);
        if (pool === 'replica') {
          // What a hot standby answers when replaying the primary's changes needs what the read holds.
          throw Object.assign(new Error('canceling statement due to conflict with recovery'), { code: '40001' });
        }
        return (await sql<{ one: number }>`SELECT 1 AS one`.execute(db)).rows[0];
      });
      expect(answer).toEqual({ one: 1 });
      expect(asked).toEqual(['replica', 'primary']);
      expect(await up()).toBe(1);
    } finally {
      await router.close();
      await replica.destroy();
    }
  });
});

describe('DATABASE_READ_URL', () => {
  const base = { DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/rewards', REDIS_URL: 'redis://127.0.0.1:6379' };

  it('refuses a URL that is not postgres://, naming the variable', () => {
    expect(() => loadConfig({ ...base, DATABASE_READ_URL: 'mysql://replica/rewards' })).toThrow(
      /DATABASE_READ_URL: must be a postgres:\/\/ URL/,
    );
  });

  it('takes empty as unset, and READ_MAX_LAG_MS must be positive', () => {
    expect(loadConfig({ ...base, DATABASE_READ_URL: '' }).DATABASE_READ_URL).toBeUndefined();
    expect(() => loadConfig({ ...base, READ_MAX_LAG_MS: '0' })).toThrow(/READ_MAX_LAG_MS/);
    expect(loadConfig(base)).toMatchObject({ READ_MAX_LAG_MS: 1_000, READ_LAG_POLL_MS: 200 });
  });
});
