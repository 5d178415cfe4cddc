import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  backendsWaitingOnLocks,
  brokenPromises,
  cancelledByJob,
  cancelledByJobs,
  waitForCompletedJob,
} from '../helpers/fault-checks.js';
import {
  createConfiguration,
  createMerchant,
  createRewards,
  type MerchantFixture,
  type RewardFixture,
} from '../helpers/fixtures.js';
import { describeAnswer, type MerchantPath, signedPost, type TimedAnswer } from '../helpers/merchant-http.js';
import { expectRunning, type ServiceProcess, startService } from '../helpers/processes.js';
import { inspectQueues, type QueueInspector } from '../helpers/queue-inspection.js';
import { type HeldLocks, lockRewards } from '../helpers/row-locks.js';
import { useTestContext } from '../helpers/test-context.js';
import { eventually } from '../helpers/worker.js';

/**
 * Processes killed with kill -9 at chosen moments. A worker dies while its jobs are in their first
 * batch or first slice (work committed, no cursor saved yet) or in a part of a split job: another
 * worker resumes each within 15 s (lock expiry plus one stalled-job check, at the default settings)
 * and the counts come out exact. The API dies under load: every 200 it gave has its job.
 *
 * The moment is chosen with row locks: the test locks rewards that only a later batch of the job can
 * reach, so the worker commits its first batch and then waits inside the next one, where it is killed.
 */

const RESUME_DEADLINE_MS = 15_000;
const BATCH = 50;
/** Rewards of the player (or ids) a job starts with: three batches' worth. */
const FIRST_PLAYER_REWARDS = 120;

const { env } = useTestContext();
let redis: Redis;
let inspector: QueueInspector;
let merchant: MerchantFixture;
let configurationId: string;
const services: ServiceProcess[] = [];
const locks: HeldLocks[] = [];

beforeAll(async () => {
  merchant = await createMerchant(env.db);
  configurationId = (await createConfiguration(env.db, { merchantId: merchant.id, startDate: Date.now() })).id;
  redis = new Redis(env.redisUrl);
  inspector = inspectQueues(redis, env.queuePrefix);
}, 60_000);

// Each test starts its own processes (with its own settings); none may linger into the next one.
afterEach(async () => {
  await releaseAll();
  await Promise.all(services.splice(0).map((service) => service.stop('SIGKILL')));
});

afterAll(async () => {
  await inspector?.close();
  redis?.disconnect();
});

async function start(kind: 'api' | 'worker', extraEnv: Record<string, string> = {}): Promise<ServiceProcess> {
  const service = await startService(kind, env, extraEnv);
  services.push(service);
  return service;
}

async function rewardsOf(playerId: string, count: number): Promise<RewardFixture[]> {
  return createRewards(env.db, {
    merchantId: merchant.id,
    rewardConfigurationId: configurationId,
    rewards: Array.from({ length: count }, (_, i) => ({ playerId, externalId: `${playerId}-${i}` })),
  });
}

/**
 * Rewards of one player that its first batch cannot pick, whatever order the planner reads them in
 * (by id through the player index, or by insertion in a heap scan): locking them lets the first batch
 * commit and stops a later one.
 */
function beyondFirstBatch(rewards: readonly RewardFixture[]): string[] {
  const early = new Set([
    ...rewards.slice(0, BATCH).map((r) => r.id),
    ...rewards
      .map((r) => r.id)
      .sort()
      .slice(0, BATCH),
  ]);
  return rewards.map((r) => r.id).filter((id) => !early.has(id));
}

async function hold(rewardIds: readonly string[]): Promise<void> {
  locks.push(await lockRewards(env.databaseUrl, rewardIds));
}

async function releaseAll(): Promise<void> {
  await Promise.all(locks.splice(0).map((lock) => lock.release()));
}

/** Polls until each job was started again after `since` (on another worker); returns when each was. */
async function resumedAfter(jobIds: readonly string[], since: number): Promise<Map<string, number>> {
  const resumed = new Map<string, number>();
  const describeJobs = async () => {
    const lines: string[] = [];
    for (const jobId of jobIds) {
      const job = await inspector.find(jobId);
      lines.push(
        job
          ? `${jobId}: ${await job.getState()}, processedOn ${job.processedOn}, attemptsStarted ${job.attemptsStarted}, ` +
              `attemptsMade ${job.attemptsMade}, stalledCounter ${job.stalledCounter}, failedReason ${job.failedReason}`
          : `${jobId}: not in Redis`,
      );
    }
    return `killed at ${since}; ${lines.join('; ')}`;
  };
  await eventually(
    async () => {
      for (const jobId of jobIds) {
        if (resumed.has(jobId)) continue;
        const job = await inspector.find(jobId);
        if (job?.processedOn && job.processedOn > since) resumed.set(jobId, job.processedOn);
        else if (job && (await job.getState()) === 'completed' && job.finishedOn && job.finishedOn > since) {
          resumed.set(jobId, job.processedOn ?? job.finishedOn);
        }
      }
      return resumed.size === jobIds.length ? true : undefined;
    },
    { timeoutMs: 90_000, intervalMs: 100, what: `jobs ${jobIds.join(', ')} to be taken up again` },
  ).catch(async (error: Error) => {
    throw new Error(`${error.message}: ${await describeJobs()}`);
  });
  return resumed;
}

const post = (api: ServiceProcess, path: MerchantPath, fields: Record<string, unknown>) =>
  signedPost(api.baseUrl, merchant, path, fields);

describe('a worker killed with kill -9', { timeout: 120_000 }, () => {
  it('in the first batch of a bulkCancel and the first slice of a bulkCancelByQuery: resumed within 15 s, exact counts', async () => {
    const tuning = { CANCEL_BATCH_SIZE: String(BATCH), FANOUT_THRESHOLD: '1000', WORKER_BULK_CONCURRENCY: '2' };
    const api = await start('api', tuning);
    const first = await start('worker', tuning);

    const listed = await rewardsOf('listed', FIRST_PLAYER_REWARDS);
    // The query's first player (ids sort it first) fills its first slice; 29 small players follow.
    const leading = await rewardsOf('first-p0', FIRST_PLAYER_REWARDS);
    const following: RewardFixture[] = [];
    for (let p = 1; p < 30; p++) following.push(...(await rewardsOf(`first-p${p}`, 3)));
    const playerIds = ['first-p0', ...Array.from({ length: 29 }, (_, i) => `first-p${i + 1}`)];
    await hold([...listed.slice(BATCH).map((r) => r.id), ...beyondFirstBatch(leading)]);

    const [bulk, byQuery] = await Promise.all([
      post(api, 'bulkCancel', { ids: listed.map((r) => r.id) }),
      post(api, 'bulkCancelByQuery', { playerIds }),
    ]);
    for (const answer of [bulk, byQuery]) expect(answer.status, describeAnswer(answer)).toBe(200);
    const bulkJob = bulk.jobId as string;
    const queryJob = byQuery.jobId as string;

    await eventually(async () => ((await backendsWaitingOnLocks(env.db, 'rewards-worker')) >= 2 ? true : undefined), {
      timeoutMs: 30_000,
      intervalMs: 50,
      what: 'both jobs to wait inside a batch after their first',
    });
    // The scene is as intended: a batch of each committed, no cursor saved for the query yet.
    expect(await cancelledByJob(env.db, bulkJob)).toBe(BATCH);
    expect(await cancelledByJob(env.db, queryJob)).toBeGreaterThanOrEqual(BATCH);
    expect((await inspector.find(queryJob))?.data.cursor).toBeUndefined();

    const second = await start('worker', tuning);
    const killed = await first.stop('SIGKILL');
    expect(killed.signal).toBe('SIGKILL');
    const killedAt = Date.now();
    await releaseAll();

    const resumed = await resumedAfter([bulkJob, queryJob], killedAt);
    for (const [jobId, at] of resumed) {
      expect({ jobId, inTime: at - killedAt <= RESUME_DEADLINE_MS, ms: at - killedAt }).toMatchObject({
        jobId,
        inTime: true,
      });
    }
    const bulkStatus = await waitForCompletedJob(api.baseUrl, merchant, bulkJob, 60_000);
    const queryStatus = await waitForCompletedJob(api.baseUrl, merchant, queryJob, 60_000);
    expect(bulkStatus.result).toEqual({
      requested: FIRST_PLAYER_REWARDS,
      cancelled: FIRST_PLAYER_REWARDS,
      alreadyCancelled: 0,
      notCancellable: 0,
      notFound: 0,
    });
    expect(queryStatus.result).toEqual({ players: 30, cancelled: FIRST_PLAYER_REWARDS + 29 * 3 });
    expect(await cancelledByJob(env.db, bulkJob)).toBe(FIRST_PLAYER_REWARDS);
    expect(await cancelledByJob(env.db, queryJob)).toBe(FIRST_PLAYER_REWARDS + 29 * 3);
    await expectRunning(second, 'second worker');
  });

  it('in a part of a split bulkCancelByQuery (in its first slice): resumed within 15 s, exact counts', async () => {
    // One part at a time, so that exactly one part is inside its first slice when the worker dies.
    const tuning = {
      CANCEL_BATCH_SIZE: String(BATCH),
      FANOUT_THRESHOLD: '40',
      FANOUT_CHUNK_SIZE: '20',
      WORKER_BULK_CONCURRENCY: '1',
    };
    const api = await start('api', tuning);
    const first = await start('worker', tuning);

    // Three parts of 20 players; each part starts with a big player whose later rows are locked.
    const playerIds = Array.from({ length: 60 }, (_, i) => `fan-p${String(i).padStart(2, '0')}`);
    const toLock: string[] = [];
    for (const [index, playerId] of playerIds.entries()) {
      const rewards = await rewardsOf(playerId, index % 20 === 0 ? FIRST_PLAYER_REWARDS : 3);
      if (index % 20 === 0) toLock.push(...beyondFirstBatch(rewards));
    }
    const total = 3 * FIRST_PLAYER_REWARDS + 57 * 3;
    await hold(toLock);

    const answer = await post(api, 'bulkCancelByQuery', { playerIds });
    expect(answer.status, describeAnswer(answer)).toBe(200);
    const rootJob = answer.jobId as string;
    await eventually(async () => ((await backendsWaitingOnLocks(env.db, 'rewards-worker')) >= 1 ? true : undefined), {
      timeoutMs: 30_000,
      intervalMs: 50,
      what: 'a part to wait inside a batch after its first',
    });
    const held = await inspector.queues['bulk-cancel'].getActive();
    expect(held.map((job) => job.name)).toEqual(['bulkCancelPart']);
    const partJob = held[0]?.id as string;
    expect(held[0]?.data.cursor).toBeUndefined();
    expect(await cancelledByJob(env.db, rootJob)).toBeGreaterThanOrEqual(BATCH);

    const second = await start('worker', tuning);
    await first.stop('SIGKILL');
    const killedAt = Date.now();
    await releaseAll();

    const resumed = await resumedAfter([partJob], killedAt);
    const at = resumed.get(partJob) as number;
    expect(at - killedAt, `ms from the kill until part ${partJob} ran again`).toBeLessThanOrEqual(RESUME_DEADLINE_MS);
    const status = await waitForCompletedJob(api.baseUrl, merchant, rootJob, 60_000);
    expect(status.result).toEqual({ players: 60, cancelled: total });
    expect(await cancelledByJob(env.db, rootJob)).toBe(total);
    await expectRunning(second, 'second worker');
  });
});

describe('the API killed with kill -9 under load', { timeout: 90_000 }, () => {
  it('every 200 it answered has its job, applied exactly', async () => {
    const api = await start('api');
    const worker = await start('worker');
    const targets: RewardFixture[] = [];
    for (let p = 0; p < 100; p++) targets.push(...(await rewardsOf(`load-p${p}`, 3)));

    const answered: Array<{ answer: TimedAnswer; rewardIds: string[] }> = [];
    let next = 0;
    let stopped = false;
    const client = async (clientIndex: number) => {
      for (let round = 0; !stopped && next < targets.length - 3; round++) {
        // Mostly single cancels, some small bulk ones.
        const bulk = (round + clientIndex) % 5 === 0;
        const rewards = targets.slice(next, next + (bulk ? 3 : 1));
        next += rewards.length;
        const answer = bulk
          ? await post(api, 'bulkCancel', { ids: rewards.map((r) => r.id) })
          : await post(api, 'cancel', { id: rewards[0]?.id });
        answered.push({ answer, rewardIds: rewards.map((r) => r.id) });
        if (answer.status === 0) stopped = true;
      }
    };
    const clients = Array.from({ length: 6 }, (_, i) => client(i));
    await eventually(async () => (answered.length >= 60 ? true : undefined), {
      timeoutMs: 30_000,
      intervalMs: 10,
      what: 'load to build up',
    });
    await api.stop('SIGKILL');
    await Promise.all(clients);

    const accepted = answered.filter((a) => a.answer.status === 200);
    expect(accepted.length).toBeGreaterThanOrEqual(60);
    // Nothing but 200 before the kill, and no answer at all after it.
    for (const { answer } of answered) expect([0, 200], describeAnswer(answer)).toContain(answer.status);

    const successor = await start('api');
    const expected = new Map<string, Record<string, number>>();
    for (const { answer, rewardIds } of accepted) {
      const n = rewardIds.length;
      expected.set(answer.jobId as string, {
        requested: n,
        cancelled: n,
        alreadyCancelled: 0,
        notCancellable: 0,
        notFound: 0,
      });
    }
    const results = new Map<string, unknown>();
    for (const jobId of expected.keys()) {
      results.set(jobId, (await waitForCompletedJob(successor.baseUrl, merchant, jobId, 30_000)).result);
    }
    expect(Object.fromEntries(results)).toEqual(Object.fromEntries(expected));
    const carried = await cancelledByJobs(env.db, [...expected.keys()]);
    for (const [jobId, result] of expected)
      expect({ jobId, n: carried.get(jobId) ?? 0 }).toEqual({ jobId, n: result.cancelled });
    const promised = accepted.flatMap(({ answer, rewardIds }) =>
      rewardIds.map((rewardId) => ({ rewardId, jobId: answer.jobId as string })),
    );
    expect(await brokenPromises(env.db, promised)).toEqual([]);
    await expectRunning(worker, 'worker');
  });
});
