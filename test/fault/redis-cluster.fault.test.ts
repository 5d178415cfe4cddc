import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { brokenPromises, cancelledByJobs, waitForCompletedJob } from '../helpers/fault-checks.js';
import { createConfiguration, createMerchant, createRewards, type MerchantFixture } from '../helpers/fixtures.js';
import { describeAnswer, type MerchantPath, signedPost, type TimedAnswer } from '../helpers/merchant-http.js';
import { expectRunning, type ServiceProcess, startService } from '../helpers/processes.js';
import { type RedisCluster, startRedisCluster } from '../helpers/redis-cluster.js';
import { useTestContext } from '../helpers/test-context.js';
import { eventually } from '../helpers/worker.js';

/**
 * The service on a real Redis Cluster of three masters (our own redis-server processes), configured
 * only by REDIS_CLUSTER_NODES. The queue prefix is a hash tag, so each queue lives in one slot; that
 * slot is moved to another master (IMPORTING / MIGRATING, MIGRATE, SETSLOT NODE) while single cancels
 * stream in and split bulk jobs run. The promise: every 200 is applied with exact counts; nothing but
 * a brief 503 is answered during the move; afterwards the service is ready on the slot's new owner.
 */

// Small batches and parts: the bulk jobs here are split and write many keys while the slot moves.
const tuning = { CANCEL_BATCH_SIZE: '10', FANOUT_THRESHOLD: '40', FANOUT_CHUNK_SIZE: '20' };

const { env } = useTestContext();
let cluster: RedisCluster;
let api: ServiceProcess;
let worker: ServiceProcess;
let merchant: MerchantFixture;
let configurationId: string;
const services: ServiceProcess[] = [];

beforeAll(async () => {
  cluster = await startRedisCluster(3);
  merchant = await createMerchant(env.db);
  configurationId = (await createConfiguration(env.db, { merchantId: merchant.id, startDate: Date.now() })).id;
  // No REDIS_URL at all: the Cluster seed list is the only Redis the processes are told about.
  const clusterEnv = { REDIS_CLUSTER_NODES: cluster.seedList, REDIS_URL: undefined, ...tuning };
  for (const kind of ['api', 'worker'] as const) {
    const service = await startService(kind, env, clusterEnv);
    services.push(service);
    if (kind === 'api') api = service;
    else worker = service;
  }
}, 120_000);

afterAll(async () => {
  await Promise.all(services.map((service) => service.stop('SIGKILL')));
  await cluster?.stop();
});

async function rewards(prefix: string, count: number, perPlayer = 1) {
  return createRewards(env.db, {
    merchantId: merchant.id,
    rewardConfigurationId: configurationId,
    rewards: Array.from({ length: count }, (_, i) => ({
      playerId: `${prefix}-p${Math.floor(i / perPlayer)}`,
      externalId: `${prefix}-${i}`,
    })),
  });
}

const post = (path: MerchantPath, fields: Record<string, unknown>) => signedPost(api.baseUrl, merchant, path, fields);

async function readyz(service: ServiceProcess): Promise<number> {
  const response = await fetch(`${service.baseUrl}/readyz`, { signal: AbortSignal.timeout(3_000) }).catch(
    () => undefined,
  );
  await response?.body?.cancel();
  return response?.status ?? 0;
}

const singleResult = { requested: 1, cancelled: 1, alreadyCancelled: 0, notCancellable: 0, notFound: 0 };

describe('on a Redis Cluster', { timeout: 90_000 }, () => {
  it('keeps the queues in the Cluster, in the one slot of the prefix hash tag', async () => {
    const [reward] = await rewards('placed', 1);
    const answer = await post('cancel', { id: reward?.id });
    expect(answer.status, describeAnswer(answer)).toBe(200);
    const status = await waitForCompletedJob(api.baseUrl, merchant, answer.jobId as string);
    expect(status.result).toEqual(singleResult);

    const slot = await cluster.slotOf(`${env.queuePrefix}:anything`);
    const owner = await cluster.ownerOf(slot);
    expect(await cluster.keysInSlot(owner, slot)).toBeGreaterThan(0);
    // Every key of the prefix is in that slot (hence on that one master), and none went to the shared Redis.
    for (const node of cluster.nodes) {
      const keys = (await node.admin.keys(`${env.queuePrefix}*`)) as string[];
      if (node !== owner) expect(keys).toEqual([]);
      for (const key of keys) expect(await cluster.slotOf(key)).toBe(slot);
    }
    const shared = new Redis(env.redisUrl);
    try {
      const [, leaked] = await shared.scan('0', 'MATCH', `${env.queuePrefix}*`, 'COUNT', 100_000);
      expect(leaked).toEqual([]);
    } finally {
      shared.disconnect();
    }
    expect(await readyz(api)).toBe(200);
    expect(await readyz(worker)).toBe(200);
  });

  it('moves the queue slot to another master under load: every 200 applied, counts exact, only 503s meanwhile', async () => {
    const singles = await rewards('stream', 400);
    const listed = await rewards('listed', 70);
    const queried = await rewards('queried', 150, 3);
    const slot = await cluster.slotOf(`${env.queuePrefix}:anything`);
    const source = await cluster.ownerOf(slot);
    const target = cluster.nodes.find((node) => node !== source);
    if (!target) throw new Error('no other master');

    const bulk = await Promise.all([
      post('bulkCancel', { ids: listed.map((r) => r.id) }),
      post('bulkCancelByQuery', { playerIds: [...new Set(queried.map((r) => r.playerId))] }),
    ]);
    for (const answer of bulk) expect(answer.status, describeAnswer(answer)).toBe(200);

    // Four clients send single cancels until told to stop; the slot moves while they do.
    const stream: Array<{ answer: TimedAnswer; rewardId: string }> = [];
    let next = 0;
    let stopping = false;
    const client = async () => {
      while (!stopping && next < singles.length) {
        const reward = singles[next++];
        if (!reward) break;
        stream.push({ answer: await post('cancel', { id: reward.id }), rewardId: reward.id });
      }
    };
    const clients = Array.from({ length: 4 }, client);
    await eventually(async () => (stream.length >= 40 ? true : undefined), {
      timeoutMs: 30_000,
      intervalMs: 20,
      what: 'traffic to flow before the move',
    });
    const move = await cluster.moveSlot(slot, target, { keysPerBatch: 10, pauseMs: 5 });
    const movedAt = Date.now();
    await eventually(async () => (stream.some((s) => s.answer.sentAt > movedAt + 500) ? true : undefined), {
      timeoutMs: 30_000,
      intervalMs: 20,
      what: 'traffic to flow after the move',
    });
    stopping = true;
    await Promise.all(clients);

    expect(move.keysMoved).toBeGreaterThan(0);
    for (const node of cluster.nodes) expect((await cluster.ownerOf(slot, node)).port).toBe(target.port);
    const statuses = new Map<number, number>();
    for (const { answer } of stream) statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
    for (const { answer } of stream) expect([200, 503], describeAnswer(answer)).toContain(answer.status);
    // After the move the service is healthy again: the last requests were all accepted.
    const afterMove = stream.filter((s) => s.answer.sentAt > movedAt + 500);
    expect(afterMove.length).toBeGreaterThan(0);
    for (const { answer } of afterMove) expect(answer.status, describeAnswer(answer)).toBe(200);

    const accepted = stream.filter((s) => s.answer.status === 200);
    const expected = new Map<string, Record<string, number>>(
      accepted.map((s) => [s.answer.jobId as string, singleResult]),
    );
    expected.set(bulk[0]?.jobId as string, { ...singleResult, requested: 70, cancelled: 70 });
    expected.set(bulk[1]?.jobId as string, { players: 50, cancelled: 150 });
    const results = new Map<string, unknown>();
    for (const jobId of expected.keys()) {
      results.set(jobId, (await waitForCompletedJob(api.baseUrl, merchant, jobId, 60_000)).result);
    }
    expect(Object.fromEntries(results)).toEqual(Object.fromEntries(expected));
    const carried = await cancelledByJobs(env.db, [...expected.keys()]);
    for (const [jobId, result] of expected)
      expect({ jobId, n: carried.get(jobId) ?? 0 }).toEqual({ jobId, n: result.cancelled });
    const promised = [
      ...accepted.map((s) => ({ rewardId: s.rewardId, jobId: s.answer.jobId as string })),
      ...listed.map((r) => ({ rewardId: r.id, jobId: bulk[0]?.jobId as string })),
      ...queried.map((r) => ({ rewardId: r.id, jobId: bulk[1]?.jobId as string })),
    ];
    expect(await brokenPromises(env.db, promised)).toEqual([]);

    // The keys live on the new owner now, and readiness checks that owner.
    expect(await cluster.keysInSlot(source, slot)).toBe(0);
    expect(await cluster.keysInSlot(target, slot)).toBeGreaterThan(0);
    expect(await readyz(api)).toBe(200);
    expect(await readyz(worker)).toBe(200);
    await expectRunning(api, 'api');
    await expectRunning(worker, 'worker');
    console.info(
      `slot ${slot} moved ${move.from} → ${move.to}: ${move.keysMoved} keys in ${move.ms} ms; answers ${JSON.stringify(Object.fromEntries(statuses))}`,
    );
  });
});
