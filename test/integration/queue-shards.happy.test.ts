import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { batchIdOf } from '../../src/shared/cancellations/member-ids.js';
import type { Config } from '../../src/shared/config/config.js';
import { jobShard, ShardLayout } from '../../src/shared/redis/shards.js';
import { startTestApi, type TestApi } from '../helpers/api.js';
import { cancelPaths, fetchJobStatus, requestCancellation, waitForJob } from '../helpers/cancellation.js';
import type { TestEnvironment } from '../helpers/environment.js';
import { createConfiguration, createMerchant, createRewards, type MerchantFixture } from '../helpers/fixtures.js';
import { signedBody } from '../helpers/signing.js';
import { useTestContext } from '../helpers/test-context.js';
import { startTestWorker } from '../helpers/worker.js';

/**
 * QUEUE_SHARDS=4 on one Redis (the layout a Cluster spreads; docs/design.md, "Queue shards"): each
 * merchant's jobs and keys under its own shard's hash tag, job ids naming their shard, and a change of
 * the shard count on a running deployment (QUEUE_SHARDS_PREVIOUS) that loses no job and no idempotency key.
 */

const SHARDS = 4;
// Small parts: the bulk job below is split, and its parts must land in its own shard.
const { env } = useTestContext({ settings: { FANOUT_THRESHOLD: '4', FANOUT_CHUNK_SIZE: '2' } });
let redis: Redis;
let sharded: Config;
let layout: ShardLayout;
const merchants: Array<{ merchant: MerchantFixture; configurationId: string }> = [];

beforeAll(async () => {
  sharded = { ...env.config, QUEUE_SHARDS: SHARDS };
  layout = new ShardLayout(sharded);
  redis = new Redis(env.redisUrl);
  // Two merchants on two different shards.
  while (merchants.length < 2) {
    const merchant = await createMerchant(env.db);
    if (merchants.some((m) => layout.merchantShard(m.merchant.id) === layout.merchantShard(merchant.id))) continue;
    const configurationId = (await createConfiguration(env.db, { merchantId: merchant.id, startDate: Date.now() })).id;
    merchants.push({ merchant, configurationId });
  }
});

afterAll(async () => {
  redis?.disconnect();
});

async function rewardsOf(index: number, tag: string, count: number) {
  const { merchant, configurationId } = merchants[index] as (typeof merchants)[number];
  return createRewards(env.db, {
    merchantId: merchant.id,
    rewardConfigurationId: configurationId,
    rewards: Array.from({ length: count }, (_, i) => ({ playerId: `${tag}-p${i}`, externalId: `${tag}-${i}` })),
  });
}

/** Every key of this file's prefix and of its shards. */
async function keysOfThisFile(): Promise<string[]> {
  const keys: string[] = [];
  for (const pattern of [`${env.queuePrefix}:*`, `${env.queuePrefix.slice(0, -1)}-*`]) {
    let cursor = '0';
    do {
      const [next, found] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      cursor = next;
      keys.push(...found);
    } while (cursor !== '0');
  }
  return keys;
}

const withConfig = (config: Config): TestEnvironment => ({ ...env, config });

/** Every key naming a merchant is under that merchant's shard prefix (and, if asked, it has one). */
function expectMerchantKeysUnderOwnShard(keys: readonly string[], { atLeastOne }: { atLeastOne: boolean }): void {
  for (const { merchant } of merchants) {
    const own = layout.merchantPrefix(merchant.id);
    const mentioning = keys.filter((key) => key.toLowerCase().includes(merchant.id.toLowerCase()));
    if (atLeastOne) expect(mentioning.length, `keys naming merchant ${merchant.id}`).toBeGreaterThan(0);
    for (const key of mentioning) expect(key.startsWith(`${own}:`), key).toBe(true);
  }
}

describe('QUEUE_SHARDS=4', { timeout: 60_000 }, () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi(withConfig(sharded));
  });
  afterAll(async () => {
    await api?.close();
  });

  it("puts each merchant's jobs and keys under its own shard's tag; every job runs with exact counts", async () => {
    const jobs: Array<{ index: number; jobId: string; expected: Record<string, number> }> = [];
    for (const index of [0, 1]) {
      const { merchant } = merchants[index] as (typeof merchants)[number];
      const [one] = await rewardsOf(index, 'one', 1);
      const listed = await rewardsOf(index, 'listed', 6);
      const queried = await rewardsOf(index, 'queried', 3);
      jobs.push({
        index,
        jobId: await requestCancellation(api, merchant, 'cancel', { id: one?.id }),
        expected: { requested: 1, cancelled: 1, alreadyCancelled: 0, notCancellable: 0, notFound: 0 },
      });
      const keyed = await api.post(cancelPaths.bulkCancel, signedBody(merchant, { ids: listed.map((r) => r.id) }), {
        'Idempotency-Key': 'order-1',
      });
      expect(keyed.status).toBe(200);
      jobs.push({
        index,
        jobId: keyed.headers.get('x-job-id') as string,
        expected: { requested: 6, cancelled: 6, alreadyCancelled: 0, notCancellable: 0, notFound: 0 },
      });
      jobs.push({
        index,
        jobId: await requestCancellation(api, merchant, 'bulkCancelByQuery', {
          playerIds: queried.map((r) => r.playerId),
        }),
        expected: { players: 3, cancelled: 3 },
      });
    }
    for (const { index, jobId } of jobs) {
      const merchantId = merchants[index]?.merchant.id as string;
      expect(jobShard(jobId)).toBe(layout.merchantShard(merchantId));
    }
    // Keys naming a merchant (its rate-limit bucket) live for seconds only: looked at while they exist.
    expectMerchantKeysUnderOwnShard(await keysOfThisFile(), { atLeastOne: true });

    const worker = await startTestWorker(withConfig(sharded));
    try {
      for (const { index, jobId, expected } of jobs) {
        const status = await waitForJob(api, merchants[index]?.merchant as MerchantFixture, jobId);
        expect({ jobId, state: status.state, result: status.result }).toEqual({
          jobId,
          state: 'completed',
          result: expected,
        });
      }
    } finally {
      await worker.close();
    }

    // Every key is under the shard of the merchant or job it belongs to; nothing of theirs under the plain prefix.
    const keys = await keysOfThisFile();
    expectMerchantKeysUnderOwnShard(keys, { atLeastOne: false });
    for (const { index, jobId } of jobs) {
      const own = layout.merchantPrefix(merchants[index]?.merchant.id as string);
      // A single cancel's keys are its batch's (member-ids.ts).
      const ofJob = keys.filter((key) => key.includes(jobId) || key.includes(batchIdOf(jobId)));
      expect(ofJob.length).toBeGreaterThan(0);
      for (const key of ofJob) expect(key.startsWith(`${own}:`), key).toBe(true);
    }
    const idempotency = keys.filter((key) => key.includes(':i:'));
    expect(idempotency.map((key) => key.slice(0, key.indexOf(':'))).sort()).toEqual(
      merchants.map(({ merchant }) => layout.merchantPrefix(merchant.id)).sort(),
    );
    // The cancellation queues of the plain prefix were never used.
    expect(
      keys.filter(
        (key) => key.startsWith(`${env.queuePrefix}:cancel:`) || key.startsWith(`${env.queuePrefix}:bulk-cancel:`),
      ),
    ).toEqual([]);
  });

  it("lists every shard's queues on the dashboard and in gateway_queue_jobs", async () => {
    const authorization = `Bearer ${env.config.ADMIN_TOKEN}`;
    const board = await api.get('/admin/queues/api/queues', { authorization });
    expect(board.status).toBe(200);
    const names = ((await board.json()) as { queues: Array<{ name: string }> }).queues.map((queue) => queue.name);
    const expected = ['webhooks'];
    for (let shard = 0; shard < SHARDS; shard++) expected.push(`shard-${shard}:cancel`, `shard-${shard}:bulk-cancel`);
    expect(names.sort()).toEqual(expected.sort());

    const metrics = await (await api.get('/metrics')).text();
    for (let shard = 0; shard < SHARDS; shard++) {
      for (const queue of ['cancel', 'bulk-cancel']) {
        expect(metrics).toContain(
          `gateway_queue_jobs{queue="${queue}",shard="${shard}",state="waiting",process="api"}`,
        );
      }
    }
    expect(metrics).toContain('gateway_queue_jobs{queue="webhooks",state="waiting",process="api"}');
  });

  it('answers a job id of another shard or of none as not found, and aborts a queued job in its shard', async () => {
    const { merchant } = merchants[0] as (typeof merchants)[number];
    const elsewhere = layout.newJobId(merchants[1]?.merchant.id as string);
    expect((await fetchJobStatus(api, merchant, elsewhere)).status).toBe(404);
    const [reward] = await rewardsOf(0, 'aborted', 1);
    const jobId = await requestCancellation(api, merchant, 'bulkCancel', { ids: [reward?.id] });
    const aborted = await api.post('/api/v1/integration/jobs/cancel', signedBody(merchant, { jobId }));
    expect(aborted.status).toBe(200);
    expect(((await aborted.json()) as { state: string }).state).toBe('cancelled');
    expect(await redis.exists(`${layout.merchantPrefix(merchant.id)}:abort:${jobId}`)).toBe(1);
  });
});

describe('changing the shard count on a running deployment (1 → 4, both counts read meanwhile)', {
  timeout: 60_000,
}, () => {
  it('runs the jobs queued under the old count and replays their idempotency keys', async () => {
    const { merchant } = merchants[1] as (typeof merchants)[number];
    const listed = await rewardsOf(1, 'before-move', 3);
    const fields = { ids: listed.map((r) => r.id) };
    // Queued before the change, with QUEUE_SHARDS=1: a v4 id, in the plain prefix.
    const before = await startTestApi(env);
    let oldJobId: string;
    try {
      const answer = await before.post(cancelPaths.bulkCancel, signedBody(merchant, fields), {
        'Idempotency-Key': 'move-1',
      });
      expect(answer.status).toBe(200);
      oldJobId = answer.headers.get('x-job-id') as string;
    } finally {
      await before.close();
    }
    expect(jobShard(oldJobId)).toBeNull();

    // The new count, with the previous one still read: replicas started with both settings.
    const moving = { ...sharded, QUEUE_SHARDS_PREVIOUS: 1 };
    const api = await startTestApi(withConfig(moving));
    const worker = await startTestWorker(withConfig(moving));
    try {
      const status = await waitForJob(api, merchant, oldJobId);
      expect(status).toMatchObject({ state: 'completed', result: { requested: 3, cancelled: 3 } });
      const replay = await api.post(cancelPaths.bulkCancel, signedBody(merchant, fields), {
        'Idempotency-Key': 'move-1',
      });
      expect(replay.status).toBe(200);
      expect(replay.headers.get('x-job-id')).toBe(oldJobId);
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      // New work goes to the merchant's shard under the new count.
      const [fresh] = await rewardsOf(1, 'after-move', 1);
      const newJobId = await requestCancellation(api, merchant, 'cancel', { id: fresh?.id });
      expect(jobShard(newJobId)).toBe(layout.merchantShard(merchant.id));
      expect(await waitForJob(api, merchant, newJobId)).toMatchObject({ state: 'completed' });
    } finally {
      await worker.close();
      await api.close();
    }
  });
});

describe('fair turns across shards', { timeout: 60_000 }, () => {
  it("a merchant's job on one shard waits for at most one job of another shard's backlog", async () => {
    // One bulk job at a time in the whole worker, shared by its four shards.
    const config = { ...sharded, WORKER_BULK_CONCURRENCY: 1 };
    const api = await startTestApi(withConfig(config));
    const [busy, quiet] = merchants as [(typeof merchants)[number], (typeof merchants)[number]];
    try {
      const backlog: string[] = [];
      for (let job = 0; job < 12; job++) {
        const [reward] = await rewardsOf(0, `backlog-${job}`, 1);
        backlog.push(await requestCancellation(api, busy.merchant, 'bulkCancel', { ids: [reward?.id] }));
      }
      const [reward] = await rewardsOf(1, 'behind-backlog', 1);
      const late = await requestCancellation(api, quiet.merchant, 'bulkCancel', { ids: [reward?.id] });

      const worker = await startTestWorker(withConfig(config));
      try {
        const lateDone = await waitForJob(api, quiet.merchant, late);
        const backlogDone = [];
        for (const jobId of backlog) backlogDone.push(await waitForJob(api, busy.merchant, jobId));
        expect(lateDone.state).toBe('completed');
        const finishedAt = lateDone.finishedAt as number;
        const before = backlogDone.filter((status) => (status.finishedAt as number) < finishedAt).length;
        // Queued after all twelve, in one line it would finish last; across shards it waits for at most the
        // job running when it came and one turn.
        expect(before).toBeLessThanOrEqual(2);
      } finally {
        await worker.close();
      }
    } finally {
      await api.close();
    }
  });
});
