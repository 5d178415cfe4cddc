import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  backendsWaitingOnLocks,
  brokenPromises,
  cancelledByJob,
  cancelledByJobs,
  rewardStates,
  waitForCompletedJob,
} from '../helpers/fault-checks.js';
import {
  createConfiguration,
  createMerchant,
  createRewards,
  createSession,
  type MerchantFixture,
} from '../helpers/fixtures.js';
import { describeAnswer, errorCodeOf, signedPost, type TimedAnswer } from '../helpers/merchant-http.js';
import { expectRunning, type ServiceProcess, startService } from '../helpers/processes.js';
import { inspectQueues, type QueueInspector } from '../helpers/queue-inspection.js';
import { lockRewards, lockTable } from '../helpers/row-locks.js';
import { serverOf, startTcpProxy, type TcpProxy, throughProxy } from '../helpers/tcp-proxy.js';
import { useTestContext } from '../helpers/test-context.js';
import { eventually } from '../helpers/worker.js';

/**
 * Postgres goes away under a running API and worker (a TCP proxy between them and the server is cut
 * and then refuses connections), while Redis stays. The promise: nobody exits; the reads answer 503
 * errorCode 11 within 2 s; cancels are still accepted (they need only Redis); the worker stops taking
 * jobs, loses no attempt to the outage, resumes within 5 s of Postgres answering again, and then every
 * reward a 200 promised is CANCELLED under its job with exact counts.
 */

// Small batches and parts so that every bulk job here is split and runs in several transactions.
const tuning = {
  CANCEL_BATCH_SIZE: '10',
  FANOUT_THRESHOLD: '40',
  FANOUT_CHUNK_SIZE: '20',
  // Every readAll goes to the database, so that the outage shows in each one.
  READ_CACHE_TTL_MS: '0',
};
const OUTAGE_MS = 10_000;
/** Past the API's merchant cache lifetime (5 s by default): cancels must not depend on a fresh lookup. */
const LATE_IN_OUTAGE_MS = 6_500;
const ANSWER_DEADLINE_MS = 2_000;
const RESUME_DEADLINE_MS = 5_000;

const { env } = useTestContext();
let proxy: TcpProxy;
let api: ServiceProcess;
let worker: ServiceProcess;
let redis: Redis;
let inspector: QueueInspector;
let merchant: MerchantFixture;
let sessionToken: string;
let configurationId: string;
const services: ServiceProcess[] = [];

async function rewards(prefix: string, count: number, status: 'ACTIVE' | 'USED' = 'ACTIVE', perPlayer = 1) {
  return createRewards(env.db, {
    merchantId: merchant.id,
    rewardConfigurationId: configurationId,
    rewards: Array.from({ length: count }, (_, i) => ({
      playerId: `${prefix}-p${Math.floor(i / perPlayer)}`,
      externalId: `${prefix}-${i}`,
      status,
    })),
  });
}

beforeAll(async () => {
  proxy = await startTcpProxy(serverOf(env.databaseUrl));
  merchant = await createMerchant(env.db);
  configurationId = (await createConfiguration(env.db, { merchantId: merchant.id, startDate: Date.now() })).id;
  sessionToken = (await createSession(env.db, { merchantId: merchant.id, playerId: 'session-player' })).token;
  const viaProxy = { DATABASE_URL: throughProxy(env.databaseUrl, proxy), ...tuning };
  [api, worker] = await Promise.all([startService('api', env, viaProxy), startService('worker', env, viaProxy)]);
  services.push(api, worker);
  redis = new Redis(env.redisUrl);
  inspector = inspectQueues(redis, env.queuePrefix);
}, 120_000);

// A test that made a process exit has failed already; the next one starts from live processes again.
beforeEach(async () => {
  const viaProxy = { DATABASE_URL: throughProxy(env.databaseUrl, proxy), ...tuning };
  await proxy.restore();
  if (!api.alive()) {
    api = await startService('api', env, viaProxy);
    services.push(api);
  }
  if (!worker.alive()) {
    worker = await startService('worker', env, viaProxy);
    services.push(worker);
  }
});

afterAll(async () => {
  await Promise.all(services.map((service) => service.stop('SIGKILL')));
  await inspector?.close();
  redis?.disconnect();
  await proxy?.close();
});

const post = (path: Parameters<typeof signedPost>[2], fields: Record<string, unknown>) =>
  signedPost(api.baseUrl, merchant, path, fields);

function expectAccepted(answers: TimedAnswer[]): string[] {
  for (const answer of answers) {
    expect({ status: answer.status, jobId: answer.jobId }, describeAnswer(answer)).toEqual({
      status: 200,
      jobId: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
  }
  return answers.map((answer) => answer.jobId as string);
}

function expectUnavailableInTime(answers: TimedAnswer[]): void {
  for (const answer of answers) {
    expect(
      { status: answer.status, errorCode: errorCodeOf(answer), inTime: answer.ms <= ANSWER_DEADLINE_MS },
      describeAnswer(answer),
    ).toEqual({ status: 503, errorCode: 11, inTime: true });
  }
}

async function expectAlive(): Promise<void> {
  await expectRunning(api, 'api');
  await expectRunning(worker, 'worker');
}

/** Every job (and every part of a split job) used exactly one attempt: the outage cost none. */
async function expectOneAttemptEach(jobIds: readonly string[]): Promise<void> {
  for (const jobId of jobIds) {
    const jobs = await inspector.withParts(jobId);
    expect(jobs.length, `job ${jobId} is still in Redis`).toBeGreaterThan(0);
    for (const job of jobs)
      expect({ job: job.id, attemptsMade: job.attemptsMade }).toEqual({ job: job.id, attemptsMade: 1 });
  }
}

const singleResult = { requested: 1, cancelled: 1, alreadyCancelled: 0, notCancellable: 0, notFound: 0 };

describe('Postgres connections cut', { timeout: 60_000 }, () => {
  it('while idle: no process exits, and both carry on with new connections', async () => {
    const [first, second] = await rewards('idle', 2);
    const warm = await post('cancel', { id: first?.id });
    await waitForCompletedJob(api.baseUrl, merchant, expectAccepted([warm])[0] as string);
    expect((await post('readAll', {})).status).toBe(200);
    expect(proxy.openConnections()).toBeGreaterThan(0);
    const acceptedBefore = proxy.acceptedConnections();

    proxy.cut();

    await eventually(async () => ((await post('readAll', {})).status === 200 ? true : undefined), {
      timeoutMs: RESUME_DEADLINE_MS,
      intervalMs: 100,
      what: 'readAll to answer 200 again after the cut',
    });
    const after = await post('cancel', { id: second?.id });
    const [jobId] = expectAccepted([after]);
    const status = await waitForCompletedJob(api.baseUrl, merchant, jobId as string, 20_000);
    expect(status.result).toEqual(singleResult);
    expect(proxy.acceptedConnections()).toBeGreaterThan(acceptedBefore);
    await expectAlive();
  });

  it('while checked out mid-transaction: the request answers 503 in time, the job completes exactly, no attempt lost', async () => {
    const targets = await rewards('midtx', 15);
    // The worker's first batch (10 ids) waits on this row, inside its transaction.
    const rowLock = await lockRewards(env.databaseUrl, [targets[7]?.id as string]);
    const tableLock = await lockTable(env.databaseUrl, 'reward_configurations');
    try {
      const [jobId] = expectAccepted([await post('bulkCancel', { ids: targets.map((r) => r.id) })]);
      const pendingRead = post('readAll', {});
      await eventually(
        async () =>
          (await backendsWaitingOnLocks(env.db, 'rewards-worker')) > 0 &&
          (await backendsWaitingOnLocks(env.db, 'rewards-api')) > 0
            ? true
            : undefined,
        { timeoutMs: 20_000, intervalMs: 50, what: 'the worker and the API to wait inside their statements' },
      );

      const cutAt = Date.now();
      proxy.cut();
      const read = await pendingRead;
      await expectAlive();
      expect(
        { status: read.status, errorCode: errorCodeOf(read), inTime: read.answeredAt - cutAt <= ANSWER_DEADLINE_MS },
        describeAnswer(read),
      ).toEqual({ status: 503, errorCode: 11, inTime: true });

      await rowLock.release();
      await tableLock.release();
      const status = await waitForCompletedJob(api.baseUrl, merchant, jobId as string, 30_000);
      expect(status.result).toEqual({
        requested: 15,
        cancelled: 15,
        alreadyCancelled: 0,
        notCancellable: 0,
        notFound: 0,
      });
      expect(await cancelledByJob(env.db, jobId as string)).toBe(15);
      await expectOneAttemptEach([jobId as string]);
      await expectAlive();
    } finally {
      await rowLock.release();
      await tableLock.release();
    }
  });
});

describe('Postgres unreachable for a while', { timeout: 120_000 }, () => {
  it('reads answer 503 in time, cancels are accepted, the worker pauses and then applies every promise exactly', async () => {
    const earlySingles = await rewards('early', 20);
    const lateSingles = await rewards('late', 20);
    const bulkActive = await rewards('bulk', 80);
    const bulkUsed = await rewards('bulk-used', 5, 'USED');
    const lateBulk = await rewards('late-bulk', 10);
    const queried = await rewards('query', 180, 'ACTIVE', 3);
    const queriedPlayers = [...new Set(queried.map((r) => r.playerId))];
    const unknownIds = Array.from({ length: 5 }, () => randomUUID());
    // The API knows the merchant from a request before the outage, as a live service would.
    expect((await post('readAll', {})).status).toBe(200);

    const probes: TimedAnswer[] = [];
    const probe = async () => {
      probes.push(
        ...(await Promise.all([
          post('readAll', {}),
          post('betSlip', { authToken: sessionToken }),
          // An id Redis does not hold: only Postgres could answer it.
          post('jobStatus', { jobId: randomUUID() }),
        ])),
      );
    };
    const pace = () => new Promise((resolve) => setTimeout(resolve, 300));

    await proxy.refuse();
    const downAt = Date.now();
    await probe();
    const early = await Promise.all([
      ...earlySingles.map((reward) => post('cancel', { id: reward.id })),
      post('bulkCancel', { ids: [...bulkActive, ...bulkUsed].map((r) => r.id).concat(unknownIds) }),
      post('bulkCancelByQuery', { playerIds: queriedPlayers }),
    ]);
    const earlyJobs = expectAccepted(early);
    while (Date.now() - downAt < LATE_IN_OUTAGE_MS) {
      await probe();
      await pace();
    }
    const late = await Promise.all([
      ...lateSingles.map((reward) => post('cancel', { externalId: reward.externalId })),
      post('bulkCancel', { externalIds: lateBulk.map((r) => r.externalId) }),
    ]);
    const lateJobs = expectAccepted(late);
    while (Date.now() - downAt < OUTAGE_MS) {
      await probe();
      await pace();
    }

    // Still down: the jobs accepted late in the outage were not taken; nothing failed.
    for (const jobId of lateJobs) {
      const job = await inspector.find(jobId);
      expect({ jobId, state: await job?.getState() }).toEqual({
        jobId,
        state: expect.stringMatching(/^(waiting|prioritized)$/),
      });
    }
    expect((await inspector.counts()).failed ?? 0).toBe(0);
    await expectAlive();
    expect(probes.length).toBeGreaterThanOrEqual(3 * 10);
    expectUnavailableInTime(probes);

    await proxy.restore();
    const upAt = Date.now();
    const firstApplied = await eventually(
      async () => {
        const states = await rewardStates(
          env.db,
          lateSingles.map((r) => r.id),
        );
        return [...states.values()].some((state) => state.status === 'CANCELLED') ? Date.now() : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 100, what: 'the worker to resume' },
    );
    expect(firstApplied - upAt, 'ms from Postgres answering again to the first job applied').toBeLessThanOrEqual(
      RESUME_DEADLINE_MS,
    );
    await eventually(async () => ((await post('readAll', {})).status === 200 ? true : undefined), {
      timeoutMs: RESUME_DEADLINE_MS,
      intervalMs: 100,
      what: 'readAll to answer 200 again',
    });

    const expected = new Map<string, Record<string, number>>();
    for (const jobId of [...earlyJobs.slice(0, 20), ...lateJobs.slice(0, 20)]) expected.set(jobId, singleResult);
    expected.set(earlyJobs[20] as string, {
      requested: 90,
      cancelled: 80,
      alreadyCancelled: 0,
      notCancellable: 5,
      notFound: 5,
    });
    expected.set(earlyJobs[21] as string, { players: 60, cancelled: 180 });
    expected.set(lateJobs[20] as string, {
      requested: 10,
      cancelled: 10,
      alreadyCancelled: 0,
      notCancellable: 0,
      notFound: 0,
    });
    const results = new Map<string, Record<string, number> | null>();
    for (const jobId of expected.keys()) {
      results.set(jobId, (await waitForCompletedJob(api.baseUrl, merchant, jobId, 60_000)).result);
    }
    expect(Object.fromEntries(results)).toEqual(Object.fromEntries(expected));
    // Counts are exact: each job's count is the rewards that carry its id.
    const carried = await cancelledByJobs(env.db, [...expected.keys()]);
    for (const [jobId, result] of results)
      expect({ jobId, n: carried.get(jobId) ?? 0 }).toEqual({ jobId, n: result?.cancelled });

    const promised = [
      ...earlySingles.map((r, i) => ({ rewardId: r.id, jobId: earlyJobs[i] as string })),
      ...lateSingles.map((r, i) => ({ rewardId: r.id, jobId: lateJobs[i] as string })),
      ...bulkActive.map((r) => ({ rewardId: r.id, jobId: earlyJobs[20] as string })),
      ...queried.map((r) => ({ rewardId: r.id, jobId: earlyJobs[21] as string })),
      ...lateBulk.map((r) => ({ rewardId: r.id, jobId: lateJobs[20] as string })),
    ];
    expect(await brokenPromises(env.db, promised)).toEqual([]);
    const untouched = await rewardStates(
      env.db,
      bulkUsed.map((r) => r.id),
    );
    expect([...untouched.values()].map((state) => state.status)).toEqual(Array(5).fill('USED'));
    await expectOneAttemptEach([...expected.keys()]);
    expect((await inspector.counts()).failed ?? 0).toBe(0);
    await expectAlive();
  });
});
