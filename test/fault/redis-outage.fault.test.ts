import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { brokenPromises, cancelledByJobs, waitForCompletedJob } from '../helpers/fault-checks.js';
import {
  createConfiguration,
  createMerchant,
  createRewards,
  createSession,
  type MerchantFixture,
} from '../helpers/fixtures.js';
import {
  describeAnswer,
  errorCodeOf,
  type MerchantPath,
  signedPost,
  type TimedAnswer,
} from '../helpers/merchant-http.js';
import { expectRunning, type ServiceProcess, startService } from '../helpers/processes.js';
import { durableArgs, type RedisServer, startRedisServer } from '../helpers/redis-server.js';
import { useTestContext } from '../helpers/test-context.js';
import { eventually } from '../helpers/worker.js';

/**
 * Redis goes away under a running API and worker: a redis-server of this file's own, with the
 * production persistence settings (AOF, fsync every second), killed with kill -9 and restarted on the
 * same port and directory. The promise: cancels answer 503 errorCode 11 within 2 s while it is down,
 * the reads keep answering 200, nobody exits, both reconnect by themselves within 5 s, and a crash
 * loses no job that was answered 200 (beyond the documented one-second fsync window).
 */

const ANSWER_DEADLINE_MS = 2_000;
const RECONNECT_DEADLINE_MS = 5_000;
/** appendfsync everysec: a write is on disk within about a second; jobs answered before this are safe. */
const FSYNC_WINDOW_MS = 1_500;

const { env } = useTestContext();
let redisServer: RedisServer;
let api: ServiceProcess;
let worker: ServiceProcess;
let merchant: MerchantFixture;
let configurationId: string;
let sessionToken: string;
const services: ServiceProcess[] = [];

beforeAll(async () => {
  redisServer = await startRedisServer({ args: durableArgs });
  merchant = await createMerchant(env.db);
  configurationId = (await createConfiguration(env.db, { merchantId: merchant.id, startDate: Date.now() })).id;
  sessionToken = (await createSession(env.db, { merchantId: merchant.id, playerId: 'session-player' })).token;
  [api, worker] = await Promise.all([startWorkerOrApi('api'), startWorkerOrApi('worker')]);
}, 120_000);

afterAll(async () => {
  await Promise.all(services.map((service) => service.stop('SIGKILL')));
  await redisServer?.stop();
});

async function startWorkerOrApi(kind: 'api' | 'worker'): Promise<ServiceProcess> {
  const service = await startService(kind, env, { REDIS_URL: redisServer.url });
  services.push(service);
  return service;
}

async function rewards(prefix: string, count: number) {
  return createRewards(env.db, {
    merchantId: merchant.id,
    rewardConfigurationId: configurationId,
    rewards: Array.from({ length: count }, (_, i) => ({ playerId: `${prefix}-p${i}`, externalId: `${prefix}-${i}` })),
  });
}

const post = (path: MerchantPath, fields: Record<string, unknown>) => signedPost(api.baseUrl, merchant, path, fields);

async function ready(service: ServiceProcess): Promise<boolean> {
  const response = await fetch(`${service.baseUrl}/readyz`, { signal: AbortSignal.timeout(2_000) }).catch(
    () => undefined,
  );
  await response?.body?.cancel();
  return response?.status === 200;
}

const singleResult = { requested: 1, cancelled: 1, alreadyCancelled: 0, notCancellable: 0, notFound: 0 };

describe('Redis unreachable', { timeout: 90_000 }, () => {
  it('cancels answer 503 in time, reads keep answering, nobody exits, both reconnect within 5 s', async () => {
    const [warmReward, ...spare] = await rewards('outage', 12);
    const warm = await post('cancel', { id: warmReward?.id });
    expect(warm.status, describeAnswer(warm)).toBe(200);
    await waitForCompletedJob(api.baseUrl, merchant, warm.jobId as string);

    await redisServer.kill();
    const downAt = Date.now();
    const refused: TimedAnswer[] = [];
    const reads: TimedAnswer[] = [];
    // A few rounds over three seconds: the clients' reconnect loops are in different states each time.
    let round = 0;
    while (Date.now() - downAt < 3_000 || round < 3) {
      round += 1;
      const [cancel, bulk, byQuery, readAll, betSlip] = await Promise.all([
        post('cancel', { externalId: `outage-${round}` }),
        post('bulkCancel', { externalIds: ['outage-1', 'outage-2'] }),
        post('bulkCancelByQuery', { playerIds: ['outage-p1'] }),
        post('readAll', {}),
        post('betSlip', { authToken: sessionToken }),
      ]);
      refused.push(cancel, bulk, byQuery);
      reads.push(readAll, betSlip);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    for (const answer of refused) {
      expect(
        { status: answer.status, errorCode: errorCodeOf(answer), inTime: answer.ms <= ANSWER_DEADLINE_MS },
        describeAnswer(answer),
      ).toEqual({ status: 503, errorCode: 11, inTime: true });
    }
    for (const answer of reads) expect(answer.status, describeAnswer(answer)).toBe(200);
    await expectRunning(api, 'api');
    await expectRunning(worker, 'worker');

    await redisServer.restart();
    const upAt = Date.now();
    // The API: a cancel is accepted again within 5 s.
    const accepted = await eventually(
      async () => {
        const answer = await post('cancel', { id: spare[0]?.id });
        return answer.status === 200 ? answer : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 100, what: 'a cancel to be accepted after Redis is back' },
    );
    expect(accepted.answeredAt - upAt, 'ms from Redis back to a cancel accepted').toBeLessThanOrEqual(
      RECONNECT_DEADLINE_MS,
    );
    // The worker: it takes that job within 5 s of its acceptance (so it has reconnected by then).
    const status = await waitForCompletedJob(api.baseUrl, merchant, accepted.jobId as string, 30_000);
    expect(status.result).toEqual(singleResult);
    expect(
      (status.finishedAt ?? Number.POSITIVE_INFINITY) - accepted.answeredAt,
      'ms from the job accepted to the worker finishing it',
    ).toBeLessThanOrEqual(RECONNECT_DEADLINE_MS);
    for (const service of [api, worker]) {
      await eventually(async () => ((await ready(service)) ? true : undefined), {
        timeoutMs: Math.max(RECONNECT_DEADLINE_MS - (Date.now() - upAt), 100),
        intervalMs: 100,
        what: `/readyz of ${service === api ? 'the api' : 'the worker'} within 5 s of Redis being back`,
      });
    }
    await expectRunning(api, 'api');
    await expectRunning(worker, 'worker');
  });
});

describe('Redis killed with kill -9 and restarted from its AOF', { timeout: 90_000 }, () => {
  it('loses no job answered 200 more than the fsync window before the crash', async () => {
    // Only the API while the jobs are sent: they stay waiting in Redis, where the crash can reach them.
    await worker.stop('SIGTERM');
    const singles = await rewards('aof-single', 30);
    const listed = await rewards('aof-bulk', 25);
    const queried = await rewards('aof-query', 10);
    const later = await rewards('aof-later', 200);

    const settled = await Promise.all([
      ...singles.map((reward) => post('cancel', { id: reward.id })),
      post('bulkCancel', { ids: listed.map((r) => r.id) }),
      post('bulkCancelByQuery', { playerIds: queried.map((r) => r.playerId) }),
    ]);
    for (const answer of settled) expect(answer.status, describeAnswer(answer)).toBe(200);
    const lastSettled = Math.max(...settled.map((answer) => answer.answeredAt));

    // Traffic goes on until the first jobs are past the fsync window; the crash hits it mid-stream.
    const stream: TimedAnswer[] = [];
    let next = 0;
    while (Date.now() - lastSettled <= FSYNC_WINDOW_MS && next < later.length) {
      stream.push(await post('cancel', { id: later[next]?.id }));
      next += 1;
    }
    const inFlight = later.slice(next, next + 5).map((reward) => post('cancel', { id: reward.id }));
    await redisServer.kill();
    const killedAt = Date.now();
    stream.push(...(await Promise.all(inFlight)));
    for (const answer of stream) expect([200, 503], describeAnswer(answer)).toContain(answer.status);

    await redisServer.restart();
    worker = await startWorkerOrApi('worker');

    // Every job answered 200 at least the fsync window before the crash survived it and ran.
    const safe = [...settled, ...stream.filter((a) => a.status === 200 && killedAt - a.answeredAt > FSYNC_WINDOW_MS)];
    const expected = new Map<string, Record<string, number>>();
    for (const answer of settled.slice(0, singles.length)) expected.set(answer.jobId as string, singleResult);
    expected.set(settled[singles.length]?.jobId as string, { ...singleResult, requested: 25, cancelled: 25 });
    expected.set(settled[singles.length + 1]?.jobId as string, { players: 10, cancelled: 10 });
    for (const answer of safe.slice(settled.length)) expected.set(answer.jobId as string, singleResult);
    const results = new Map<string, unknown>();
    for (const jobId of expected.keys()) {
      results.set(jobId, (await waitForCompletedJob(api.baseUrl, merchant, jobId, 30_000)).result);
    }
    expect(Object.fromEntries(results)).toEqual(Object.fromEntries(expected));
    const carried = await cancelledByJobs(env.db, [...expected.keys()]);
    for (const [jobId, result] of expected)
      expect({ jobId, n: carried.get(jobId) ?? 0 }).toEqual({ jobId, n: result.cancelled });
    const promised = [
      ...singles.map((r, i) => ({ rewardId: r.id, jobId: settled[i]?.jobId as string })),
      ...listed.map((r) => ({ rewardId: r.id, jobId: settled[singles.length]?.jobId as string })),
      ...queried.map((r) => ({ rewardId: r.id, jobId: settled[singles.length + 1]?.jobId as string })),
    ];
    expect(await brokenPromises(env.db, promised)).toEqual([]);
    await expectRunning(api, 'api');
    await expectRunning(worker, 'worker');
  });
});
