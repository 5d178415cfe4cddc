import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../helpers/api.js';
import { cancelPaths } from '../helpers/cancellation.js';
import { createMerchant, type MerchantFixture } from '../helpers/fixtures.js';
import { type RedisServer, startRedisServer } from '../helpers/redis-server.js';
import { bodyBoundHeaders, signedBody } from '../helpers/signing.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';
import { useTestContext } from '../helpers/test-context.js';
import { eventually } from '../helpers/worker.js';

/**
 * A bulk cancel whose store's outcome is unknown: a redis-server of this file's own behind a TCP proxy
 * of its own, which stalls the API's connection at the very command that adds the job (the one that
 * carries the request's player id), so the API answers 503 not knowing whether the job was stored.
 * Then the add is either lost with the link (cut, and ioredis gives the command up) or delivered late.
 * The promise: a retry with the same Idempotency-Key, or the same version-2 request sent again, is
 * answered 200 only with the id of a job that exists (job status 200), or 503; never a job id that
 * job status does not know. No worker runs: a stored job stays where the API put it.
 */

const ENQUEUE_TIMEOUT_MS = 300;

const { env } = useTestContext({ settings: { ENQUEUE_TIMEOUT_MS: String(ENQUEUE_TIMEOUT_MS) } });
let redisServer: RedisServer;
let proxy: TcpProxy;
let api: TestApi;
let merchant: MerchantFixture;
let v2Merchant: MerchantFixture;

beforeAll(async () => {
  redisServer = await startRedisServer();
  proxy = await startTcpProxy({ host: '127.0.0.1', port: redisServer.port });
  // Started here rather than by the context: the API's Redis is the proxy above.
  api = await startTestApi(env, {}, { redisUrl: `redis://127.0.0.1:${proxy.port}` });
  merchant = await createMerchant(env.db);
  v2Merchant = await createMerchant(env.db, { signatureVersion: 2 });
}, 60_000);

afterAll(async () => {
  await api?.close();
  await proxy?.close();
  await redisServer?.stop();
});

type Send = () => Promise<Response>;

function keyedRequest(playerId: string, idempotencyKey: string): Send {
  return () =>
    api.post(cancelPaths.bulkCancelByQuery, signedBody(merchant, { playerIds: [playerId] }), {
      'Idempotency-Key': idempotencyKey,
    });
}

/** The same version-2 request (body and X-Signature) every time: its replay record answers a repeat. */
function v2Request(playerId: string): Send {
  const body = JSON.stringify(signedBody(v2Merchant, { playerIds: [playerId] }));
  const headers = bodyBoundHeaders(v2Merchant, { method: 'POST', pathWithQuery: cancelPaths.bulkCancelByQuery, body });
  return () => api.post(cancelPaths.bulkCancelByQuery, body, headers);
}

async function jobStatus(of: MerchantFixture, jobId: string): Promise<number> {
  const body = JSON.stringify(signedBody(of, { jobId }));
  const headers =
    of === v2Merchant ? bodyBoundHeaders(of, { method: 'POST', pathWithQuery: cancelPaths.jobStatus, body }) : {};
  const response = await api.post(cancelPaths.jobStatus, body, headers);
  await response.body?.cancel();
  return response.status;
}

/** The bulk jobs Redis holds for this player, in any state. */
async function jobsFor(of: MerchantFixture, playerId: string): Promise<string[]> {
  const queue = api.deps.producer.queues.forMerchant(of.id).queues['bulk-cancel'];
  const jobs = await queue.getJobs(['waiting', 'prioritized', 'active', 'completed', 'failed', 'delayed']);
  return jobs.filter((job) => job.data.playerIds?.includes(playerId)).map((job) => job.id as string);
}

/** The first request: its add stalls in the proxy, and the API answers 503 errorCode 11 at its deadline. */
async function firstRequestStalledAtItsAdd(send: Send, playerId: string): Promise<void> {
  proxy.holdFrom(playerId);
  const first = await send();
  expect(first.status).toBe(503);
  expect(await first.json()).toMatchObject({ errorCode: 11 });
  expect(first.headers.get('x-job-id')).toBeNull();
  // The stall was at the add: the connection holds the command that carries the player id.
  expect(proxy.heldConnections()).toBe(1);
}

/** The link breaks with the add still in the proxy: the add never reaches Redis. */
async function addLostWithTheLink(): Promise<void> {
  await proxy.refuse();
  // ioredis gives up the commands of a broken link after its second failed reconnect (100 ms, then 200 ms).
  await new Promise((resolve) => setTimeout(resolve, 800));
  proxy.release();
  await proxy.restore();
  await eventually(async () => ((await api.deps.redis.ping().catch(() => undefined)) === 'PONG' ? true : undefined), {
    timeoutMs: 10_000,
    what: 'the API to reach Redis again',
  });
}

/** Retries until the first store's deadline has passed (409 until then); answers the first other answer. */
async function retryAfterTheDeadline(send: Send): Promise<Response> {
  return eventually(
    async () => {
      const answer = await send();
      if (answer.status !== 409) return answer;
      await answer.body?.cancel();
      return undefined;
    },
    { timeoutMs: 10_000, what: 'the first store deadline to pass' },
  );
}

/** 200 only with a job that exists (job status 200, one job in Redis), or 503: never a job id without a job. */
async function expectAJobBehindTheAnswer(retried: Response, of: MerchantFixture, playerId: string): Promise<string> {
  if (retried.status === 503) {
    expect(await retried.json()).toMatchObject({ errorCode: 11 });
    throw new Error('503 is allowed by the promise, but with Redis back this retry should have settled the job');
  }
  expect(retried.status).toBe(200);
  await retried.body?.cancel();
  const jobId = retried.headers.get('x-job-id') as string;
  expect(jobId).toMatch(/^[0-9a-f-]{36}$/);
  expect(await jobStatus(of, jobId)).toBe(200);
  expect(await jobsFor(of, playerId)).toEqual([jobId]);
  return jobId;
}

describe('a retry after a store whose outcome is unknown', () => {
  it('with the same Idempotency-Key, after the add was lost: stores the job now, 200 and job status 200', async () => {
    const playerId = 'lost-add-keyed';
    const send = keyedRequest(playerId, 'key-lost-add');
    await firstRequestStalledAtItsAdd(send, playerId);
    await addLostWithTheLink();
    expect(await jobsFor(merchant, playerId)).toEqual([]);

    const retried = await retryAfterTheDeadline(send);
    const jobId = await expectAJobBehindTheAnswer(retried, merchant, playerId);
    // The next repeat is an ordinary replay of the job now stored.
    const again = await send();
    expect(again.status).toBe(200);
    expect(again.headers.get('x-job-id')).toBe(jobId);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
  });

  it('the same version-2 request sent again, after the add was lost: stores the job now, 200 and job status 200', async () => {
    const playerId = 'lost-add-v2';
    const send = v2Request(playerId);
    await firstRequestStalledAtItsAdd(send, playerId);
    await addLostWithTheLink();
    expect(await jobsFor(v2Merchant, playerId)).toEqual([]);

    const retried = await retryAfterTheDeadline(send);
    await expectAJobBehindTheAnswer(retried, v2Merchant, playerId);
  });

  it('with the same Idempotency-Key, after the add landed late: answers that job as a replay, and stores no second', async () => {
    const playerId = 'late-add-keyed';
    const send = keyedRequest(playerId, 'key-late-add');
    await firstRequestStalledAtItsAdd(send, playerId);
    proxy.release();
    const [stored] = await eventually(
      async () => {
        const ids = await jobsFor(merchant, playerId);
        return ids.length > 0 ? ids : undefined;
      },
      { timeoutMs: 5_000, what: 'the late add to land' },
    );

    const retried = await retryAfterTheDeadline(send);
    expect(retried.headers.get('idempotent-replayed')).toBe('true');
    expect(await expectAJobBehindTheAnswer(retried, merchant, playerId)).toBe(stored);
  });
});
