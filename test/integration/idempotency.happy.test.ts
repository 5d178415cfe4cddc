import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { idempotencyRecordKey } from '../../src/shared/redis/redis-keys.js';
import { startTestApi, type TestApi } from '../helpers/api.js';
import { cancelPaths, waitForJob } from '../helpers/cancellation.js';
import { createConfiguration, createMerchant, createRewards, type MerchantFixture } from '../helpers/fixtures.js';
import { signedBody } from '../helpers/signing.js';
import { useTestContext } from '../helpers/test-context.js';
import { startTestWorker, type TestWorker } from '../helpers/worker.js';

const { env, api } = useTestContext({ api: true });
/** A second API process's worth of wiring (own connections), sharing the Redis and database. */
let replica: TestApi;
let merchant: MerchantFixture;
let configurationId: string;

beforeAll(async () => {
  replica = await startTestApi(env);
  merchant = await createMerchant(env.db);
  configurationId = (await createConfiguration(env.db, { merchantId: merchant.id, startDate: Date.now() })).id;
});
afterAll(async () => {
  await replica?.close();
});

type Operation = 'cancel' | 'bulkCancel' | 'bulkCancelByQuery';

async function send(on: TestApi, operation: Operation, fields: Record<string, unknown>, key: string) {
  // Each call signs afresh: a retry carries a new timestamp and hash, as a real one would.
  return on.post(cancelPaths[operation], signedBody(merchant, fields), { 'Idempotency-Key': key });
}

async function jobsStored(): Promise<number> {
  const { queues } = api.deps.producer.queues.forShard(null);
  const [single, bulk] = await Promise.all([
    queues.cancel.getJobCountByTypes(),
    queues['bulk-cancel'].getJobCountByTypes(),
  ]);
  return single + bulk;
}

async function rewardsFor(prefix: string, count: number) {
  return createRewards(env.db, {
    merchantId: merchant.id,
    rewardConfigurationId: configurationId,
    rewards: Array.from({ length: count }, (_, i) => ({ playerId: `${prefix}-player`, externalId: `${prefix}-${i}` })),
  });
}

describe('Idempotency-Key', () => {
  it.each([
    ['cancel', { externalId: 'idem-cancel-1' }],
    ['bulkCancel', { ids: ['00000000-0000-4000-8000-000000000001'], externalIds: ['idem-bulk-1'] }],
    ['bulkCancelByQuery', { playerIds: ['idem-player-1', 'idem-player-2'] }],
  ] as const)(
    '%s: a repeat answers the first job id, marked as replayed, and queues nothing',
    async (operation, fields) => {
      const key = `key-${operation}`;
      const first = await send(api, operation, fields, key);
      expect(first.status).toBe(200);
      expect(first.headers.get('idempotent-replayed')).toBeNull();
      const jobId = first.headers.get('x-job-id');
      expect(jobId).toMatch(/^[0-9a-f-]{36}$/);
      const stored = await jobsStored();

      const again = await send(api, operation, fields, key);
      expect(again.status).toBe(200);
      expect(await again.text()).toBe('');
      expect(again.headers.get('x-job-id')).toBe(jobId);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(await jobsStored()).toBe(stored);
    },
  );

  it('binds the key to the fields, not to their order in the JSON or to absent versus null lists', async () => {
    const first = await send(api, 'bulkCancel', { externalIds: ['order-a', 'order-b'], ids: null }, 'key-order');
    const again = await api.post(
      cancelPaths.bulkCancel,
      { externalIds: ['order-a', 'order-b'], ...signedBody(merchant) },
      { 'Idempotency-Key': 'key-order' },
    );
    expect(again.status).toBe(200);
    expect(again.headers.get('x-job-id')).toBe(first.headers.get('x-job-id'));
    expect(again.headers.get('idempotent-replayed')).toBe('true');
  });

  it('binds the key to the lists as sets: a retry with its entries reordered or repeated replays the job', async () => {
    const first = await send(api, 'bulkCancel', { externalIds: ['set-a', 'set-b', 'set-c'] }, 'key-set');
    const again = await send(api, 'bulkCancel', { externalIds: ['set-c', 'set-a', 'set-b', 'set-a'] }, 'key-set');
    expect(again.status).toBe(200);
    expect(again.headers.get('x-job-id')).toBe(first.headers.get('x-job-id'));
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    const players = await send(api, 'bulkCancelByQuery', { playerIds: ['set-p1', 'set-p2'] }, 'key-set-players');
    const reordered = await send(api, 'bulkCancelByQuery', { playerIds: ['set-p2', 'set-p1'] }, 'key-set-players');
    expect(reordered.headers.get('x-job-id')).toBe(players.headers.get('x-job-id'));
  });

  it('a different key is a different request: it gets a job of its own', async () => {
    // Different fields too: identical waiting requests would share their job whatever the key.
    const one = await send(api, 'cancel', { externalId: 'idem-distinct-1' }, 'key-distinct-1');
    const two = await send(api, 'cancel', { externalId: 'idem-distinct-2' }, 'key-distinct-2');
    expect(two.status).toBe(200);
    expect(two.headers.get('idempotent-replayed')).toBeNull();
    expect(two.headers.get('x-job-id')).not.toBe(one.headers.get('x-job-id'));
  });

  it('replays across API replicas that share Redis', async () => {
    const fields = { playerIds: ['replica-player'] };
    const first = await send(api, 'bulkCancelByQuery', fields, 'key-replica');
    const again = await send(replica, 'bulkCancelByQuery', fields, 'key-replica');
    expect(again.status).toBe(200);
    expect(again.headers.get('x-job-id')).toBe(first.headers.get('x-job-id'));
    expect(again.headers.get('idempotent-replayed')).toBe('true');
  });

  it('two replicas racing with the same key store one job between them', async () => {
    const fields = { externalIds: ['race-1', 'race-2'] };
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) => send(i % 2 ? replica : api, 'bulkCancel', fields, 'key-race')),
    );
    const accepted = answers.filter((answer) => answer.status === 200);
    // The losers are told to come back (409) or, once the winner stored its job, replayed (200).
    for (const answer of answers) expect([200, 409]).toContain(answer.status);
    expect(accepted.length).toBeGreaterThanOrEqual(1);
    expect(new Set(accepted.map((answer) => answer.headers.get('x-job-id'))).size).toBe(1);
    expect(accepted.filter((answer) => answer.headers.get('idempotent-replayed') === null)).toHaveLength(1);
  });

  it('still replays after the job has run, and the repeat changes nothing', async () => {
    const worker: TestWorker = await startTestWorker(env);
    try {
      const rewards = await rewardsFor('after-run', 3);
      const fields = { ids: rewards.map((reward) => reward.id) };
      const first = await send(api, 'bulkCancel', fields, 'key-after-run');
      const jobId = first.headers.get('x-job-id') as string;
      const status = await waitForJob(api, merchant, jobId);
      expect(status.result).toMatchObject({ cancelled: 3 });
      // Made ACTIVE again behind the service's back: a second job would cancel it again, a replay does not.
      await env.db
        .updateTable('rewards')
        .set({ status: 'ACTIVE' })
        .where('id', '=', rewards[0]?.id as string)
        .execute();

      const stored = await jobsStored();
      const again = await send(api, 'bulkCancel', fields, 'key-after-run');
      expect(again.headers.get('x-job-id')).toBe(jobId);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(await jobsStored()).toBe(stored);
      const row = await env.db
        .selectFrom('rewards')
        .select('status')
        .where('id', '=', rewards[0]?.id as string)
        .executeTakeFirstOrThrow();
      expect(row.status).toBe('ACTIVE');
    } finally {
      await worker.close();
    }
  });

  it('keeps the record 24 hours, under the queue prefix', async () => {
    await send(api, 'cancel', { externalId: 'idem-ttl' }, 'key-ttl');
    const keys = await api.deps.redis.keys(idempotencyRecordKey(env.queuePrefix, '*'));
    expect(keys.length).toBeGreaterThan(0);
    const ttls = await Promise.all(keys.map((key) => api.deps.redis.pttl(key)));
    const day = 24 * 60 * 60 * 1_000;
    for (const ttl of ttls) {
      expect(ttl).toBeGreaterThan(day - 60_000);
      expect(ttl).toBeLessThanOrEqual(day);
    }
  });
});
