import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { type CompiledQuery, type Kysely, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  previewCancelByIdentifiers,
  previewCancelOfPlayers,
} from '../../src/api/cancellations/cancellation-preview.repository.js';
import { findBetSlipSession } from '../../src/api/library-bypasses/bet-slip-session.js';
import { selectConfigurationsJson } from '../../src/api/reward-configurations/reward-configurations.repository.js';
import { createDb } from '../../src/shared/db/client.js';
import { rewardPartitionCount } from '../../src/shared/db/migrator.js';
import type { Database } from '../../src/shared/db/schema.js';
import { findJobRecord } from '../../src/shared/jobs/cancellation-jobs.repository.js';
import { hasDeferredSlices, listDeferredSlices, listJobRewards } from '../../src/shared/jobs/job-rewards.repository.js';
import {
  cancelRewardsByIdentifiers,
  findExternalIdsNamedById,
} from '../../src/worker/cancellations/identifier-cancellations.repository.js';
import {
  cancelRewardsOfPlayers,
  cancelSliceOfPlayers,
  countCancelledByJob,
} from '../../src/worker/cancellations/query-cancellations.repository.js';
import { cancelSingleRewards } from '../../src/worker/cancellations/reward-cancellations.repository.js';
import { bet, createConfiguration, createRewards, createSession } from '../helpers/fixtures.js';
import { merchantsInTwoPartitions, partitionsInPlan, recordingDb, touchesRewards } from '../helpers/partitions.js';
import { useTestContext } from '../helpers/test-context.js';

/**
 * `rewards` is hash-partitioned by merchant (docs/design.md "Rewards partitioned by merchant"): the
 * migration makes it so, and every hot statement, as the real repository functions send it, is planned
 * onto the one partition of its merchant.
 */

const { env } = useTestContext();
let recording: { db: Kysely<Database>; statements: CompiledQuery[] };
/** Two merchants in different partitions, with a configuration and rewards each. */
const merchants: Array<{ id: string; partition: string; configurationId: string; players: string[] }> = [];

beforeAll(async () => {
  recording = recordingDb(env.databaseUrl);
  for (const { merchant, partition } of await merchantsInTwoPartitions(env.db)) {
    const configurationId = (await createConfiguration(env.db, { merchantId: merchant.id, startDate: Date.now() })).id;
    const players = ['player-1', 'player-2', 'player-3'];
    await createRewards(env.db, {
      merchantId: merchant.id,
      rewardConfigurationId: configurationId,
      rewards: players.flatMap((playerId) =>
        [1, 2, 3].map((n) => ({ playerId, externalId: `${playerId}-reward-${n}` })),
      ),
    });
    merchants.push({ id: merchant.id, partition, configurationId, players });
  }
});
afterAll(async () => {
  await recording?.db.destroy();
});

const first = () => merchants[0] as (typeof merchants)[number];
const second = () => merchants[1] as (typeof merchants)[number];

/** Runs `work` on the recording database and returns the statements it sent. */
async function statementsOf(work: (db: Kysely<Database>) => Promise<unknown>): Promise<CompiledQuery[]> {
  recording.statements.length = 0;
  await work(recording.db);
  return [...recording.statements];
}

/** Every statement of `work` that touches rewards, each with the partitions its plan names. */
async function rewardPlans(work: (db: Kysely<Database>) => Promise<unknown>) {
  const statements = (await statementsOf(work)).filter(touchesRewards);
  return Promise.all(statements.map((statement) => partitionsInPlan(env.db, statement)));
}

async function rewardIds(merchantId: string, playerId: string): Promise<string[]> {
  const rows = await env.db
    .selectFrom('rewards')
    .select('id')
    .where('merchant_id', '=', merchantId)
    .where('player_id', '=', playerId)
    .orderBy('id')
    .execute();
  return rows.map((row) => row.id);
}

describe('the migration', () => {
  it('leaves rewards hash-partitioned by merchant_id, 16 partitions by default, each with fillfactor 45', async () => {
    const partitioned = await sql<{ strategy: string; key: string }>`
      SELECT p.partstrat AS strategy, a.attname AS key
      FROM pg_partitioned_table p
      JOIN pg_attribute a ON a.attrelid = p.partrelid AND a.attnum = p.partattrs[0]
      WHERE p.partrelid = 'rewards'::regclass
    `.execute(env.db);
    expect(partitioned.rows).toEqual([{ strategy: 'h', key: 'merchant_id' }]);
    expect(await rewardPartitionCount(env.db)).toBe(16);
    const options = await sql<{ options: string[] | null }>`
      SELECT c.reloptions AS options FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = 'rewards'::regclass
    `.execute(env.db);
    expect(options.rows.map((row) => row.options)).toEqual(options.rows.map(() => ['fillfactor=45']));
  });

  it('puts merchant_id first in the keys of rewards, job records and session tokens', async () => {
    const keys = await sql<{ name: string; definition: string }>`
      SELECT conname AS name, pg_get_constraintdef(oid) AS definition FROM pg_constraint
      WHERE contype IN ('p', 'u')
        AND conrelid IN ('rewards'::regclass, 'cancellation_jobs'::regclass, 'job_rewards'::regclass,
          'job_cancel_slices'::regclass)
        OR conname = 'sessions_token_digest_key'
      ORDER BY conname
    `.execute(env.db);
    expect(keys.rows).toEqual([
      { name: 'cancellation_jobs_pkey', definition: 'PRIMARY KEY (merchant_id, id)' },
      { name: 'job_cancel_slices_pkey', definition: 'PRIMARY KEY (merchant_id, job_id, id)' },
      { name: 'job_rewards_pkey', definition: 'PRIMARY KEY (merchant_id, job_id, bucket, first_id)' },
      { name: 'rewards_pkey', definition: 'PRIMARY KEY (merchant_id, id)' },
      { name: 'sessions_token_digest_key', definition: 'UNIQUE (merchant_id, token_digest)' },
    ]);
  });

  it('`npm run migrate` partitions a new database by REWARD_PARTITIONS, and a later value changes nothing', async () => {
    const database = `${new URL(env.databaseUrl).pathname.slice(1)}_fresh`;
    await sql`CREATE DATABASE ${sql.id(database)}`.execute(env.db);
    const url = new URL(env.databaseUrl);
    url.pathname = `/${database}`;
    const fresh = createDb({ connectionString: url.toString(), poolSize: 1, applicationName: 'rewards-test-fresh' });
    const migrate = (partitions: string) =>
      promisify(execFile)('npm', ['run', '--silent', 'migrate'], {
        cwd: fileURLToPath(new URL('../..', import.meta.url)),
        env: {
          PATH: process.env.PATH,
          DATABASE_URL: url.toString(),
          REDIS_URL: env.redisUrl,
          REWARD_PARTITIONS: partitions,
          LOG_LEVEL: 'info',
        },
      });
    try {
      await migrate('4');
      expect(await rewardPartitionCount(fresh)).toBe(4);
      const strategy = await sql<{ strategy: string }>`
        SELECT partstrat AS strategy FROM pg_partitioned_table WHERE partrelid = 'rewards'::regclass
      `.execute(fresh);
      expect(strategy.rows).toEqual([{ strategy: 'h' }]);

      const again = await migrate('8');
      expect(await rewardPartitionCount(fresh)).toBe(4);
      expect(again.stdout).toContain('REWARD_PARTITIONS applies to a new database only');
    } finally {
      await fresh.destroy();
      await sql`DROP DATABASE IF EXISTS ${sql.id(database)} WITH (FORCE)`.execute(env.db);
    }
  }, 60_000);
});

describe('every hot statement on rewards touches exactly one partition: its merchant’s', () => {
  it('single cancels of two merchants coalesced together: one statement per merchant, each on its partition', async () => {
    const [a1, a2, a3] = await env.db
      .selectFrom('rewards')
      .select(['id', 'external_id'])
      .where('merchant_id', '=', first().id)
      .where('player_id', '=', 'player-1')
      .execute();
    const [b1] = await rewardIds(second().id, 'player-1');
    const at = new Date();
    const request = (merchantId: string, fields: { rewardId?: string; externalId?: string }) => ({
      jobId: randomUUID(),
      merchantId,
      ...fields,
      createdAt: at,
      startedAt: at,
    });
    const requests = [
      request(first().id, { rewardId: a1?.id }),
      request(second().id, { rewardId: b1 }),
      request(first().id, { externalId: a3?.external_id ?? undefined }),
      request(first().id, { rewardId: a2?.id }),
    ];
    let outcomes: unknown;
    const plans = await rewardPlans(async (db) => {
      outcomes = await cancelSingleRewards(db, requests);
    });
    expect(outcomes).toEqual(['cancelled', 'cancelled', 'cancelled', 'cancelled']);
    expect(plans.sort()).toEqual([[first().partition], [second().partition]].sort());
  });

  it('bulk cancel by id and external id (its dry run, the split’s lookup, and the not-found count)', async () => {
    const ids = await rewardIds(first().id, 'player-2');
    const plans = await rewardPlans(async (db) => {
      await previewCancelByIdentifiers(db, { merchantId: first().id, ids, externalIds: ['player-2-reward-1'] });
      await findExternalIdsNamedById(db, { merchantId: first().id, ids, externalIds: ['player-2-reward-1'] });
      await db.transaction().execute((trx) =>
        cancelRewardsByIdentifiers(trx, {
          jobId: randomUUID(),
          merchantId: first().id,
          ids: ids.slice(0, 2),
          externalIds: ['player-2-reward-3', 'no-such-reward'],
        }),
      );
    });
    expect(plans.length).toBeGreaterThanOrEqual(4);
    for (const plan of plans) expect(plan).toEqual([first().partition]);
  });

  it('bulk cancel by query: the dry run, the one-statement slice in both its forms, the batches, the recount and the listing', async () => {
    const merchant = second();
    const jobId = randomUUID();
    const query = { jobId, merchantId: merchant.id, filter: { rewardConfigurationId: merchant.configurationId } };
    const plans = await rewardPlans(async (db) => {
      await previewCancelOfPlayers(db, { merchantId: merchant.id, playerIds: merchant.players, filter: query.filter });
      await countCancelledByJob(db, { jobId, merchantId: merchant.id, playerIds: merchant.players });
      // A row lock held on one reward of the slice: the fast form times out and the id-order form runs.
      const [held] = await rewardIds(merchant.id, 'player-2');
      let slice: Promise<unknown> = Promise.resolve();
      await env.db.transaction().execute(async (holder) => {
        await sql`SELECT 1 FROM rewards WHERE merchant_id = ${merchant.id} AND id = ${held} FOR UPDATE`.execute(holder);
        slice = cancelSliceOfPlayers(db, { ...query, playerIds: ['player-2'], limit: 100 });
        await new Promise((resolve) => setTimeout(resolve, 400));
      });
      // The lock is released: the id-order form, which waited for it, completes.
      await slice;
      await cancelSliceOfPlayers(db, { ...query, playerIds: ['player-3'], limit: 100 });
      await db
        .transaction()
        .execute((trx) => cancelRewardsOfPlayers(trx, { ...query, playerIds: ['player-1'], limit: 2 }));
      await listDeferredSlices(db, { merchantId: merchant.id, jobId }, { skipLocked: false });
      await listJobRewards(db, { jobId, merchantId: merchant.id, after: undefined, limit: 10 });
    });
    // The slice's two forms among them: the UPDATE in scan order, and the one that locks in id order first.
    expect(plans.length).toBeGreaterThanOrEqual(7);
    for (const plan of plans) expect(plan).toEqual([merchant.partition]);
    expect(await countCancelledByJob(env.db, { jobId, merchantId: merchant.id, playerIds: merchant.players })).toBe(8);
  });

  it('job rewards pages read the job’s rewards from its merchant’s partition only', async () => {
    const jobId = randomUUID();
    await env.db
      .transaction()
      .execute((trx) =>
        cancelRewardsByIdentifiers(trx, { jobId, merchantId: first().id, ids: [], externalIds: ['player-3-reward-1'] }),
      );
    const plans = await rewardPlans(async (db) => {
      expect(await hasDeferredSlices(db, { merchantId: first().id, jobId })).toBe(false);
      const page = await listJobRewards(db, { jobId, merchantId: first().id, after: undefined, limit: 10 });
      expect(page.rewards.map((reward) => reward.externalId)).toEqual(['player-3-reward-1']);
    });
    expect(plans).toEqual([[first().partition]]);
  });
});

describe('the other hot reads do not touch rewards, and find their row through a key that starts with the merchant', () => {
  /** The index conditions of a statement's plan, with sequential scans ruled out (the tables here are tiny). */
  async function indexConditions(statement: CompiledQuery): Promise<string[]> {
    return env.db.transaction().execute(async (trx) => {
      await sql`SET LOCAL enable_seqscan = off`.execute(trx);
      const result = await trx.executeQuery<{ 'QUERY PLAN': string }>({
        ...statement,
        sql: `EXPLAIN (FORMAT JSON) ${statement.sql}`,
      });
      return [...JSON.stringify(result.rows[0]?.['QUERY PLAN']).matchAll(/"Index Cond":"([^"]*)"/g)].map(
        (match) => match[1] as string,
      );
    });
  }

  it('job status, readAll and /betSlip', async () => {
    const merchant = first();
    const jobId = randomUUID();
    await cancelSingleRewards(env.db, [
      { jobId, merchantId: merchant.id, externalId: 'player-3-reward-2', createdAt: new Date(), startedAt: new Date() },
    ]);
    const session = await createSession(env.db, { merchantId: merchant.id, playerId: 'player-1', betSlip: [bet()] });

    const statements = await statementsOf(async (db) => {
      expect((await findJobRecord(db, merchant.id, jobId))?.outcome).toBe('cancelled');
      expect(await findJobRecord(db, second().id, jobId)).toBeUndefined();
      await selectConfigurationsJson(db, { merchantId: merchant.id });
      expect((await findBetSlipSession(db, merchant.id, session.token))?.playerId).toBe('player-1');
      expect(await findBetSlipSession(db, second().id, session.token)).toBeUndefined();
    });
    expect(statements).toHaveLength(5);
    expect(statements.filter(touchesRewards)).toEqual([]);
    for (const statement of statements) {
      const conditions = await indexConditions(statement);
      expect(conditions.length).toBeGreaterThan(0);
      expect(conditions.some((condition) => condition.includes('merchant_id'))).toBe(true);
    }
  });
});
