import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../../src/shared/db/client.js';
import { cancelRewardsByIdentifiers } from '../../src/worker/cancellations/identifier-cancellations.repository.js';
import {
  cancelRewardsOfPlayers,
  cancelSliceOfPlayers,
} from '../../src/worker/cancellations/query-cancellations.repository.js';
import { cancelSingleRewards } from '../../src/worker/cancellations/reward-cancellations.repository.js';
import { createConfiguration, createMerchant } from '../helpers/fixtures.js';
import { useTestContext } from '../helpers/test-context.js';

/**
 * One lock order: the four statements that cancel rewards, run at once over the same rewards on
 * connections of their own, each given them in another order (ids ascending, requests descending,
 * players reversed, rows stored against id order), round after round. No statement may end in a
 * deadlock, and every reward ends CANCELLED by exactly one of them, with counts that add up.
 */

/** As long as the steady-state requirement asks: a minute of overlapping cancels without one deadlock. */
const RUN_MS = 60_000;
const PLAYERS = 6;
const PER_PLAYER = 100;

const { env } = useTestContext();
let merchantId: string;
let configurationId: string;
/** One pool per statement kind, ended before the deadlock counter is read (a backend reports it as it ends). */
let pools: Db[] = [];

beforeAll(async () => {
  merchantId = (await createMerchant(env.db)).id;
  configurationId = (await createConfiguration(env.db, { merchantId, startDate: Date.now() })).id;
  pools = Array.from({ length: 4 }, (_, index) =>
    createDb({ connectionString: env.databaseUrl, poolSize: 1, applicationName: `rewards-test-lock-order-${index}` }),
  );
});
afterAll(async () => {
  await Promise.all(pools.map((pool) => pool.destroy().catch(() => {})));
});

async function deadlocks(): Promise<number> {
  await sql`SELECT pg_stat_clear_snapshot()`.execute(env.db);
  const result = await sql<{ deadlocks: string }>`
    SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()
  `.execute(env.db);
  return Number(result.rows[0]?.deadlocks ?? 0);
}

/**
 * A round's rewards, stored in descending id order, so that their physical order (what a bitmap or TID
 * scan follows) is the reverse of their id order (what a primary-key scan follows).
 */
async function roundOfRewards(round: number): Promise<{ ids: string[]; players: string[] }> {
  const players = Array.from({ length: PLAYERS }, (_, index) => `order-${round}-${index}`);
  const rows = players
    .flatMap((playerId) => Array.from({ length: PER_PLAYER }, () => ({ id: randomUUID(), playerId })))
    .sort((a, b) => (a.id < b.id ? 1 : -1));
  await sql`
    INSERT INTO rewards (id, merchant_id, reward_configuration_id, player_id)
    SELECT id, ${merchantId}::uuid, ${configurationId}::uuid, player_id
    FROM unnest(${rows.map((row) => row.id)}::uuid[], ${rows.map((row) => row.playerId)}::text[])
      WITH ORDINALITY AS t(id, player_id, ordinal)
    ORDER BY ordinal
  `.execute(env.db);
  return { ids: rows.map((row) => row.id).sort(), players };
}

describe('cancels over overlapping rewards, in opposite orders, at once', () => {
  it(
    'never deadlock, and every reward is cancelled exactly once with exact counts',
    async () => {
      const before = await deadlocks();
      const [byIds, slices, batches, singles] = pools as [Db, Db, Db, Db];
      const errors: unknown[] = [];
      let rounds = 0;
      const started = Date.now();
      while (Date.now() - started < RUN_MS) {
        rounds += 1;
        const { ids, players } = await roundOfRewards(rounds);
        const jobs = { byIds: randomUUID(), slice: randomUUID(), batches: randomUUID() };
        const singleJobs = [...ids].reverse().map((id) => ({ jobId: randomUUID(), rewardId: id }));

        const counted = await Promise.allSettled([
          // bulkCancel: every id, ascending.
          byIds
            .transaction()
            .execute((trx) => cancelRewardsByIdentifiers(trx, { jobId: jobs.byIds, merchantId, ids, externalIds: [] }))
            .then((result) => result.cancelled),
          // bulkCancelByQuery, one statement per slice: the players reversed.
          cancelSliceOfPlayers(slices, {
            jobId: jobs.slice,
            merchantId,
            playerIds: [...players].reverse(),
            filter: {},
            limit: PLAYERS * PER_PLAYER,
          }).then((result) => result.cancelled),
          // bulkCancelByQuery in batches of 150, until a batch picks fewer.
          (async () => {
            let cancelled = 0;
            for (;;) {
              const result = await batches.transaction().execute((trx) =>
                cancelRewardsOfPlayers(trx, {
                  jobId: jobs.batches,
                  merchantId,
                  playerIds: players,
                  filter: {},
                  limit: 150,
                }),
              );
              cancelled += result.cancelled;
              if (result.picked < 150) return cancelled;
            }
          })(),
          // Coalesced single cancels: one request per reward, ids descending.
          cancelSingleRewards(
            singles,
            singleJobs.map(({ jobId, rewardId }) => {
              const at = new Date();
              return { jobId, merchantId, rewardId, createdAt: at, startedAt: at };
            }),
          ).then((outcomes) => outcomes.filter((outcome) => outcome === 'cancelled').length),
        ]);
        for (const outcome of counted) if (outcome.status === 'rejected') errors.push(outcome.reason);
        expect(errors).toEqual([]);
        const [a = -1, b = -1, c = -1, d = -1] = counted.map((outcome) =>
          outcome.status === 'fulfilled' ? outcome.value : -1,
        );

        // Every reward CANCELLED, by exactly one of the statements, each count what its rewards say.
        const byJob = await sql<{ job: string; status: string; rewards: number }>`
          SELECT CASE
              WHEN cancellation_job_id = ${jobs.byIds}::uuid THEN 'byIds'
              WHEN cancellation_job_id = ${jobs.slice}::uuid THEN 'slice'
              WHEN cancellation_job_id = ${jobs.batches}::uuid THEN 'batches'
              WHEN cancellation_job_id = ANY(${singleJobs.map((job) => job.jobId)}::uuid[]) THEN 'singles'
              ELSE 'none'
            END AS job, status, count(*)::int AS rewards
          FROM rewards WHERE id = ANY(${ids}::uuid[])
          GROUP BY 1, 2
        `.execute(env.db);
        const counts = Object.fromEntries(byJob.rows.map((row) => [`${row.job}:${row.status}`, row.rewards]));
        expect(byJob.rows.every((row) => row.status === 'CANCELLED' && row.job !== 'none')).toBe(true);
        expect({
          byIds: counts['byIds:CANCELLED'] ?? 0,
          slice: counts['slice:CANCELLED'] ?? 0,
          batches: counts['batches:CANCELLED'] ?? 0,
          singles: counts['singles:CANCELLED'] ?? 0,
        }).toEqual({ byIds: a, slice: b, batches: c, singles: d });
        expect(a + b + c + d).toBe(ids.length);
      }

      // A backend reports its deadlocks to the statistics when it next goes idle or ends: end them all.
      await Promise.all(pools.map((pool) => pool.destroy()));
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      expect(await deadlocks()).toBe(before);
      expect(rounds).toBeGreaterThan(5);
    },
    RUN_MS + 40_000,
  );

  it('the slice statement waits for a lock only briefly, then runs again locking in id order', async () => {
    const { ids, players } = await roundOfRewards(0);
    const jobId = randomUUID();
    const holder = createDb({ connectionString: env.databaseUrl, poolSize: 1, applicationName: 'rewards-test-holder' });
    const slicer = createDb({ connectionString: env.databaseUrl, poolSize: 1, applicationName: 'rewards-test-slicer' });
    try {
      let release: () => void = () => {};
      const released = new Promise<void>((resolve) => {
        release = resolve;
      });
      let locked: () => void = () => {};
      const lockTaken = new Promise<void>((resolve) => {
        locked = resolve;
      });
      // Another transaction holds the highest reward of the slice.
      const holding = holder.transaction().execute(async (trx) => {
        await sql`SELECT id FROM rewards WHERE id = ${ids.at(-1)}::uuid FOR UPDATE`.execute(trx);
        locked();
        await released;
      });
      await lockTaken;
      const slicing = cancelSliceOfPlayers(slicer, { jobId, merchantId, playerIds: players, filter: {}, limit: 1_000 });
      // Past the brief wait, the statement waiting on the lock is the id-order form.
      const waiting = async () =>
        (
          await sql<{ query: string }>`
            SELECT query FROM pg_stat_activity
            WHERE datname = current_database() AND application_name = 'rewards-test-slicer' AND wait_event_type = 'Lock'
          `.execute(env.db)
        ).rows[0]?.query;
      let query: string | undefined;
      for (let tries = 0; tries < 100 && !query?.includes('FOR NO KEY UPDATE'); tries++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        query = await waiting();
      }
      expect(query).toContain('FOR NO KEY UPDATE');
      release();
      await holding;
      expect(await slicing).toEqual({ rewards: ids.length, applied: true, cancelled: ids.length });
      const carrying = await sql<{ count: number }>`
        SELECT count(*)::int AS count FROM rewards
        WHERE id = ANY(${ids}::uuid[]) AND status = 'CANCELLED' AND cancellation_job_id = ${jobId}::uuid
      `.execute(env.db);
      expect(carrying.rows[0]?.count).toBe(ids.length);
    } finally {
      await Promise.all([holder.destroy(), slicer.destroy()]);
    }
  });
});
