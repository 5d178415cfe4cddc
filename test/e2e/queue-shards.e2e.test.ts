import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobShard, ShardLayout } from '../../src/shared/redis/shards.js';
import { brokenPromises, cancelledByJobs, waitForCompletedJob } from '../helpers/fault-checks.js';
import { createConfiguration, createMerchant, createRewards, type MerchantFixture } from '../helpers/fixtures.js';
import { describeAnswer, type MerchantPath, signedPost, type TimedAnswer } from '../helpers/merchant-http.js';
import { expectRunning, type ServiceProcess, startService } from '../helpers/processes.js';
import { type RedisCluster, startRedisCluster } from '../helpers/redis-cluster.js';
import { useTestContext } from '../helpers/test-context.js';

/**
 * Queue shards on a real Redis Cluster of three masters (our own redis-server processes): QUEUE_SHARDS=16,
 * the production prefix `{rewards}` (the cluster is this file's own, so no other test shares it), thirty
 * merchants sending single cancels and split bulk jobs. The promises: every accepted job completes with
 * exact counts; each master holds at least 15 % of the service's keys (the shards spread them, where one
 * prefix put them all on one master); and moving every queue-shard slot of one master to the others
 * (IMPORTING / MIGRATING, MIGRATE, SETSLOT NODE) while traffic runs loses no accepted job.
 */

const SHARDS = 16;
const PREFIX = '{rewards}';
// Small batches and parts: bulk jobs are split, so parts, parents and turns cross the moves too.
const tuning = { CANCEL_BATCH_SIZE: '10', FANOUT_THRESHOLD: '40', FANOUT_CHUNK_SIZE: '20' };
const layout = new ShardLayout({ QUEUE_PREFIX: PREFIX, QUEUE_SHARDS: SHARDS });

interface Tenant {
  merchant: MerchantFixture;
  configurationId: string;
}

/** What a 200 promised: the job's counts, and the rewards it must have cancelled under its id. */
interface Promise200 {
  tenant: Tenant;
  jobId: string;
  result: Record<string, number>;
  rewardIds: string[];
}

const { env } = useTestContext();
let cluster: RedisCluster;
let api: ServiceProcess;
let worker: ServiceProcess;
const services: ServiceProcess[] = [];
const tenants: Tenant[] = [];

beforeAll(async () => {
  cluster = await startRedisCluster(3);
  // Fixed merchant ids, so the merchants fall on the shards the same way on every run (random ids would
  // spread 30 merchants unevenly often enough to make a per-master share a matter of luck).
  for (let index = 1; index <= 30; index++) {
    const merchant = await createMerchant(env.db, { id: `00000000-0000-4000-8000-${String(index).padStart(12, '0')}` });
    const configurationId = (await createConfiguration(env.db, { merchantId: merchant.id, startDate: Date.now() })).id;
    tenants.push({ merchant, configurationId });
  }
  const clusterEnv = {
    REDIS_CLUSTER_NODES: cluster.seedList,
    REDIS_URL: undefined,
    QUEUE_PREFIX: PREFIX,
    QUEUE_SHARDS: String(SHARDS),
    ...tuning,
  };
  api = await startService('api', env, clusterEnv);
  services.push(api);
  worker = await startService('worker', env, clusterEnv);
  services.push(worker);
}, 180_000);

afterAll(async () => {
  await Promise.all(services.map((service) => service.stop('SIGKILL')));
  await cluster?.stop();
});

async function rewardsOf(tenant: Tenant, tag: string, count: number, perPlayer = 1) {
  return createRewards(env.db, {
    merchantId: tenant.merchant.id,
    rewardConfigurationId: tenant.configurationId,
    rewards: Array.from({ length: count }, (_, i) => ({
      playerId: `${tag}-p${Math.floor(i / perPlayer)}`,
      externalId: `${tag}-${i}`,
    })),
  });
}

const post = (tenant: Tenant, path: MerchantPath, fields: Record<string, unknown>) =>
  signedPost(api.baseUrl, tenant.merchant, path, fields);

const single = { requested: 1, cancelled: 1, alreadyCancelled: 0, notCancellable: 0, notFound: 0 };

/** The merchants' lists taken in turn (first of each, then second of each…), as mixed traffic arrives. */
function interleave<T>(lists: T[][]): T[] {
  const longest = Math.max(...lists.map((list) => list.length));
  return Array.from({ length: longest }, (_, index) => lists.flatMap((list) => list.slice(index, index + 1))).flat();
}

/** Runs `tasks` with `width` clients at a time, until they are done or `stop()` says so. */
async function clients<T>(tasks: Array<() => Promise<T>>, width: number, stop = () => false): Promise<T[]> {
  const done: T[] = [];
  let next = 0;
  const client = async () => {
    while (!stop() && next < tasks.length) {
      const task = tasks[next++];
      if (task) done.push(await task());
    }
  };
  await Promise.all(Array.from({ length: width }, client));
  return done;
}

/** Waits for every promised job and checks its counts, its audit and its rewards. */
async function expectKept(promises: Promise200[]): Promise<void> {
  const expected = new Map(promises.map((p) => [p.jobId, p.result]));
  const results = new Map<string, unknown>();
  for (const promise of promises) {
    const status = await waitForCompletedJob(api.baseUrl, promise.tenant.merchant, promise.jobId, 120_000);
    results.set(promise.jobId, status.result);
  }
  expect(Object.fromEntries(results)).toEqual(Object.fromEntries(expected));
  const carried = await cancelledByJobs(
    env.db,
    promises.map((p) => p.jobId),
  );
  const wrong = promises.filter((p) => carried.get(p.jobId) !== p.result.cancelled).map((p) => p.jobId);
  expect(wrong).toEqual([]);
  const promised = promises.flatMap((p) => p.rewardIds.map((rewardId) => ({ rewardId, jobId: p.jobId })));
  expect(await brokenPromises(env.db, promised)).toEqual([]);
}

/** Every key of the service on each master (the cluster is this file's own: all of it is the service's). */
async function keysPerMaster(): Promise<Map<number, number>> {
  const counts = new Map<number, number>();
  for (const node of cluster.nodes) counts.set(node.port, Number(await node.admin.call('DBSIZE')));
  return counts;
}

describe('queue shards on a 3-master Redis Cluster', { timeout: 300_000 }, () => {
  it('30 merchants: every job completes with exact counts, each master holds ≥ 15 % of the keys', async () => {
    const promises: Promise200[] = [];
    const perTenant: Array<Array<() => Promise<void>>> = [];
    for (const tenant of tenants) {
      const tasks: Array<() => Promise<void>> = [];
      perTenant.push(tasks);
      const singles = await rewardsOf(tenant, 'one', 20);
      const listed = await rewardsOf(tenant, 'listed', 45);
      const queried = await rewardsOf(tenant, 'queried', 30, 3);
      tasks.push(async () => {
        const answer = await post(tenant, 'bulkCancel', { ids: listed.map((r) => r.id) });
        expect(answer.status, describeAnswer(answer)).toBe(200);
        const result = { ...single, requested: 45, cancelled: 45 };
        promises.push({ tenant, jobId: answer.jobId as string, result, rewardIds: listed.map((r) => r.id) });
      });
      tasks.push(async () => {
        const answer = await post(tenant, 'bulkCancelByQuery', {
          playerIds: [...new Set(queried.map((r) => r.playerId))],
        });
        expect(answer.status, describeAnswer(answer)).toBe(200);
        const result = { players: 10, cancelled: 30 };
        promises.push({ tenant, jobId: answer.jobId as string, result, rewardIds: queried.map((r) => r.id) });
      });
      for (const reward of singles) {
        tasks.push(async () => {
          const answer = await post(tenant, 'cancel', { id: reward.id });
          expect(answer.status, describeAnswer(answer)).toBe(200);
          promises.push({ tenant, jobId: answer.jobId as string, result: single, rewardIds: [reward.id] });
        });
      }
    }
    await clients(interleave(perTenant), 8);
    expect(promises).toHaveLength(30 * 22);

    // A job's id names its merchant's shard, and the shards in use are spread over all 16.
    for (const promise of promises)
      expect(jobShard(promise.jobId)).toBe(layout.merchantShard(promise.tenant.merchant.id));
    expect(new Set(promises.map((p) => jobShard(p.jobId))).size).toBe(SHARDS);
    await expectKept(promises);

    const perMaster = await keysPerMaster();
    const total = [...perMaster.values()].reduce((sum, n) => sum + n, 0);
    const shares = [...perMaster.entries()].map(([port, n]) => ({ port, keys: n, share: n / total }));
    console.info(`keys per master: ${JSON.stringify(shares)} (total ${total})`);
    for (const { share } of shares) expect(share).toBeGreaterThanOrEqual(0.15);

    // Every key is under `{rewards}` or one of its 16 shard tags; the dashboard's metric lists every shard.
    for (const node of cluster.nodes) {
      const keys = (await node.admin.keys('*')) as string[];
      const stray = keys.filter((key) => !key.startsWith('{rewards}') && !/^\{rewards-(\d|1[0-5])\}/.test(key));
      expect(stray).toEqual([]);
    }
    const metrics = await (await fetch(`${worker.baseUrl}/metrics`)).text();
    for (let shard = 0; shard < SHARDS; shard++) {
      expect(metrics).toContain(`gateway_queue_jobs{queue="cancel",shard="${shard}",state="completed"`);
      expect(metrics).toContain(`gateway_queue_jobs{queue="bulk-cancel",shard="${shard}",state="completed"`);
    }
  });

  it('moves every queue-shard slot of one master to the others under load: no accepted job lost', async () => {
    const slots = await Promise.all(
      Array.from({ length: SHARDS }, (_, shard) => cluster.slotOf(`${layout.shardPrefix(shard)}:x`)),
    );
    const owners = await Promise.all(slots.map((slot) => cluster.ownerOf(slot)));
    const source = cluster.nodes[0];
    if (!source) throw new Error('no master');
    const moving = slots.filter((_, shard) => owners[shard] === source);
    const targets = cluster.nodes.filter((node) => node !== source);
    expect(moving.length).toBeGreaterThan(0);

    // The load: per merchant 10 single cancels and one split bulkCancel, sent by 6 clients until the moves end.
    type Sent = { answer: TimedAnswer; promise: Promise200 };
    const perTenant: Array<Array<() => Promise<Sent>>> = [];
    for (const tenant of tenants) {
      const tasks: Array<() => Promise<Sent>> = [];
      perTenant.push(tasks);
      const singles = await rewardsOf(tenant, 'moving-one', 10);
      const listed = await rewardsOf(tenant, 'moving-listed', 45);
      tasks.push(async () => {
        const answer = await post(tenant, 'bulkCancel', { ids: listed.map((r) => r.id) });
        const result = { ...single, requested: 45, cancelled: 45 };
        return { answer, promise: { tenant, jobId: answer.jobId ?? '', result, rewardIds: listed.map((r) => r.id) } };
      });
      for (const reward of singles) {
        tasks.push(async () => {
          const answer = await post(tenant, 'cancel', { id: reward.id });
          return { answer, promise: { tenant, jobId: answer.jobId ?? '', result: single, rewardIds: [reward.id] } };
        });
      }
    }
    let movedAt = Number.POSITIVE_INFINITY;
    const sending = clients(interleave(perTenant), 6, () => Date.now() > movedAt + 500);
    const reports = [];
    const movingFrom = Date.now();
    for (const [index, slot] of moving.entries()) {
      reports.push(
        await cluster.moveSlot(slot, targets[index % targets.length] as (typeof targets)[number], {
          keysPerBatch: 10,
          pauseMs: 20,
        }),
      );
    }
    movedAt = Date.now();
    const sent = await sending;

    for (const slot of moving)
      for (const node of cluster.nodes) expect((await cluster.ownerOf(slot, node)) === source).toBe(false);
    expect(reports.reduce((sum, report) => sum + report.keysMoved, 0)).toBeGreaterThan(0);
    // The traffic did meet the moves (slots half moved: ASK and MOVED redirections).
    const duringMoves = sent.filter(({ answer }) => answer.sentAt >= movingFrom && answer.sentAt <= movedAt);
    expect(duringMoves.length).toBeGreaterThan(50);
    // Only a brief 503 while a slot is half moved; every 200 is a job that runs.
    for (const { answer } of sent) expect([200, 503], describeAnswer(answer)).toContain(answer.status);
    const accepted = sent.filter(({ answer }) => answer.status === 200).map(({ promise }) => promise);
    expect(accepted.length).toBeGreaterThan(sent.length / 2);
    await expectKept(accepted);

    // The master that gave its shard slots away holds no shard key any more; the others serve all shards.
    const perMaster = await keysPerMaster();
    console.info(
      `moved ${moving.length} shard slots off :${source.port} (${reports.map((r) => `${r.keysMoved} keys in ${r.ms} ms`).join(', ')}); ` +
        `${accepted.length}/${sent.length} accepted (${duringMoves.length} sent during the moves); keys per master now ${JSON.stringify(Object.fromEntries(perMaster))}`,
    );
    for (const slot of moving) expect(await cluster.keysInSlot(source, slot)).toBe(0);
    await expectRunning(api, 'api');
    await expectRunning(worker, 'worker');
    expect((await fetch(`${api.baseUrl}/readyz`)).status).toBe(200);
    expect((await fetch(`${worker.baseUrl}/readyz`)).status).toBe(200);
  });
});
