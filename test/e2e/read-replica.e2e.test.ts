import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../../src/shared/db/client.js';
import { migrateToLatest } from '../../src/shared/db/migrator.js';
import {
  createConfiguration,
  createMerchant,
  createRewards,
  type MerchantFixture,
  type RewardFixture,
} from '../helpers/fixtures.js';
import { type PostgresCluster, startPrimaryWithStandby } from '../helpers/postgres-cluster.js';
import { type ServiceProcess, startService } from '../helpers/processes.js';
import { type ReadMetrics, type ReadsByPool, readMetrics, readsSince } from '../helpers/read-metrics.js';
import { signedBody } from '../helpers/signing.js';
import { useTestContext } from '../helpers/test-context.js';
import { eventually } from '../helpers/worker.js';

/**
 * The read replica for real: a primary and a streaming standby (`pg_basebackup -R`) started by this
 * file, the API and worker as processes, the API given the standby as DATABASE_READ_URL. Which pool
 * answered each read is read from the API's `gateway_db_reads_total`.
 */

const MAX_LAG_MS = 500;

const { env } = useTestContext();
let cluster: PostgresCluster;
let primaryDb: Db;
let api: ServiceProcess;
let worker: ServiceProcess;
let merchant: MerchantFixture;
let rewards: RewardFixture[];

beforeAll(async () => {
  cluster = await startPrimaryWithStandby();
  const admin = new pg.Client({ connectionString: cluster.primary.url() });
  await admin.connect();
  await admin.query('CREATE DATABASE rewards');
  await admin.end();
  primaryDb = createDb({ connectionString: cluster.primary.url('rewards'), poolSize: 3, applicationName: 'test' });
  await migrateToLatest(primaryDb);
  merchant = await createMerchant(primaryDb);
  const configuration = await createConfiguration(primaryDb, {
    merchantId: merchant.id,
    name: 'replica spring offer',
    externalId: 'replica-config',
    startDate: Date.now(),
  });
  rewards = await createRewards(primaryDb, {
    merchantId: merchant.id,
    rewardConfigurationId: configuration.id,
    rewards: Array.from({ length: 12 }, (_, i) => ({ playerId: `replica-p${i}`, externalId: `replica-r${i}` })),
  });
  const database = { DATABASE_URL: cluster.primary.url('rewards') };
  [api, worker] = await Promise.all([
    startService('api', env, {
      ...database,
      DATABASE_READ_URL: cluster.standby.url('rewards'),
      READ_MAX_LAG_MS: String(MAX_LAG_MS),
      READ_LAG_POLL_MS: '100',
      // Every read reaches a pool: no answer or merchant record comes from the process's memory.
      READ_CACHE_TTL_MS: '0',
      MERCHANT_CACHE_TTL_MS: '0',
      DB_CONNECT_TIMEOUT_MS: '500',
    }),
    startService('worker', env, database),
  ]);
});

afterAll(async () => {
  await Promise.all([api?.stop(), worker?.stop()]);
  await primaryDb?.destroy();
  await cluster?.close();
});

async function post(path: string, fields: Record<string, unknown>): Promise<Response> {
  return fetch(`${api.baseUrl}/api/v1/integration${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(signedBody(merchant, fields)),
  });
}

async function snapshot(): Promise<ReadMetrics> {
  return readMetrics(await (await fetch(`${api.adminUrl}/metrics`)).text());
}

async function readsByPool(): Promise<ReadsByPool> {
  return (await snapshot()).reads;
}

async function replicaState(): Promise<{ up: number; lagSeconds: number }> {
  const { replicaUp, replicaLagSeconds } = await snapshot();
  return { up: replicaUp, lagSeconds: replicaLagSeconds };
}

async function waitUntilReplicaKeepsUp(): Promise<void> {
  await eventually(
    async () => {
      const { up, lagSeconds } = await replicaState();
      return up === 1 && lagSeconds * 1_000 <= MAX_LAG_MS ? true : undefined;
    },
    { timeoutMs: 20_000, intervalMs: 100, what: 'the replica to keep up' },
  );
}

async function standbyQuery(text: string): Promise<void> {
  const client = new pg.Client({ connectionString: cluster.standby.url('rewards') });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

async function cancel(reward: RewardFixture): Promise<string> {
  const response = await post('/rewards/cancel', { id: reward.id });
  expect(response.status).toBe(200);
  return response.headers.get('x-job-id') as string;
}

async function completedStatus(jobId: string): Promise<Record<string, unknown>> {
  return eventually(
    async () => {
      const body = (await (await post('/jobs/status', { jobId })).json()) as Record<string, unknown>;
      return body.state === 'completed' ? body : undefined;
    },
    { what: `job ${jobId} to complete` },
  );
}

describe('read replica: a real streaming standby', { timeout: 120_000 }, () => {
  it('serves readAll and dry runs from the replica while it keeps up; merchants are still looked up on the primary', async () => {
    await waitUntilReplicaKeepsUp();
    const before = await readsByPool();
    const readAll = await post('/reward-configurations/readAll', { name: 'spring' });
    expect(readAll.status).toBe(200);
    expect(((await readAll.json()) as { name: string }[]).map((configuration) => configuration.name)).toEqual([
      'replica spring offer',
    ]);
    const dryRun = await post('/rewards/bulkCancel', { externalIds: ['replica-r0', 'replica-r1'], dryRun: true });
    expect(dryRun.status).toBe(200);
    expect(await dryRun.json()).toMatchObject({ requested: 2, cancellable: 2 });
    const routed = readsSince(await readsByPool(), before);
    expect(routed.replica).toMatchObject({ readAll: 1, dryRun: 1 });
    expect(routed.primary).toMatchObject({ readAll: 0, dryRun: 0, merchant: 2 });
  });

  it('with replay paused while writes go on, reads go to the primary, and see those writes', async () => {
    await standbyQuery('SELECT pg_wal_replay_pause()');
    try {
      // Single cancels: the worker writes each to the primary, the paused replica does not replay them.
      const jobIds: string[] = [];
      for (const reward of rewards.slice(0, 4)) jobIds.push(await cancel(reward));
      for (const jobId of jobIds) await completedStatus(jobId);
      await eventually(async () => ((await replicaState()).lagSeconds * 1_000 > MAX_LAG_MS ? true : undefined), {
        timeoutMs: 10_000,
        intervalMs: 100,
        what: 'the replica lag to pass READ_MAX_LAG_MS',
      });

      const before = await readsByPool();
      const readAll = await post('/reward-configurations/readAll', { name: 'offer' });
      expect(readAll.status).toBe(200);
      expect(await readAll.json()).toHaveLength(1);
      const dryRun = await post('/rewards/bulkCancel', {
        externalIds: rewards.slice(0, 6).map((reward) => reward.externalId),
        dryRun: true,
      });
      expect(dryRun.status).toBe(200);
      // The primary's counts: the replica, paused, still holds these four rewards as ACTIVE.
      expect(await dryRun.json()).toMatchObject({ requested: 6, cancellable: 2, alreadyCancelled: 4 });
      const routed = readsSince(await readsByPool(), before);
      expect(routed.primary).toMatchObject({ readAll: 1, dryRun: 1 });
      expect(routed.replica).toMatchObject({ readAll: 0, dryRun: 0 });
    } finally {
      await standbyQuery('SELECT pg_wal_replay_resume()');
    }
    await waitUntilReplicaKeepsUp();
    const before = await readsByPool();
    expect((await post('/reward-configurations/readAll', { name: 'replica' })).status).toBe(200);
    expect(readsSince(await readsByPool(), before).replica.readAll).toBe(1);
  });

  it('with the primary stopped, a readAll never asked before, a dry run and a finished job status answer 200 from the replica', async () => {
    const jobId = await cancel(rewards[6] as RewardFixture);
    const finished = await completedStatus(jobId);
    // The replica has replayed the job's end before the primary goes.
    await waitUntilReplicaKeepsUp();
    await eventually(
      async () => {
        const replica = createDb({
          connectionString: cluster.standby.url('rewards'),
          poolSize: 1,
          applicationName: 't',
        });
        try {
          const row = await sql<{ state: string }>`SELECT state FROM cancellation_jobs WHERE id = ${jobId}`.execute(
            replica,
          );
          return row.rows[0]?.state === 'completed' ? true : undefined;
        } finally {
          await replica.destroy();
        }
      },
      { what: 'the replica to hold the finished job' },
    );

    await cluster.primary.stop();
    const before = await readsByPool();

    const readAll = await post('/reward-configurations/readAll', { name: 'SPRING OFFER', status: 'ACTIVE' });
    expect(readAll.status).toBe(200);
    expect(((await readAll.json()) as { name: string }[]).map((c) => c.name)).toEqual(['replica spring offer']);

    const dryRun = await post('/rewards/bulkCancelByQuery', { playerIds: ['replica-p6', 'replica-p7'], dryRun: true });
    expect(dryRun.status).toBe(200);
    expect(await dryRun.json()).toEqual({ players: 2, cancellable: 1 });

    const status = await post('/jobs/status', { jobId });
    expect(status.status).toBe(200);
    expect(await status.json()).toEqual(finished);

    const routed = readsSince(await readsByPool(), before);
    expect(routed.replica).toMatchObject({ readAll: 1, dryRun: 1, jobStatus: 1, merchant: 3 });
    expect(routed.primary).toMatchObject({ readAll: 0, dryRun: 0, jobStatus: 0, merchant: 0 });
    expect(await replicaState()).toMatchObject({ up: 1 });
  });
});
