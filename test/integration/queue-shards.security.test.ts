import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobShard, ShardLayout, shardJobId } from '../../src/shared/redis/shards.js';
import { fetchJobStatus, requestCancellation } from '../helpers/cancellation.js';
import { createConfiguration, createMerchant, createRewards, type MerchantFixture } from '../helpers/fixtures.js';
import { signedBody } from '../helpers/signing.js';
import { useTestContext } from '../helpers/test-context.js';

/**
 * Job ids name their queue shard (docs/design.md §20), so a caller can write an id that points at any
 * shard: that must give nothing away. Another merchant's job is as unknown as one that never existed,
 * whichever shard it is on, and cannot be aborted; an id naming a shard the deployment does not have is
 * simply not found.
 */

const SHARDS = 4;
const { env, api } = useTestContext({ settings: { QUEUE_SHARDS: String(SHARDS) }, api: true });
let redis: Redis;
let layout: ShardLayout;
const merchants: MerchantFixture[] = [];
let victimJobId: string;

beforeAll(async () => {
  layout = new ShardLayout(env.config);
  redis = new Redis(env.redisUrl);
  while (merchants.length < 2) {
    const merchant = await createMerchant(env.db);
    if (merchants.some((m) => layout.merchantShard(m.id) === layout.merchantShard(merchant.id))) continue;
    merchants.push(merchant);
  }
  const victim = merchants[1] as MerchantFixture;
  const configurationId = (await createConfiguration(env.db, { merchantId: victim.id, startDate: Date.now() })).id;
  const [reward] = await createRewards(env.db, {
    merchantId: victim.id,
    rewardConfigurationId: configurationId,
    rewards: [{ playerId: 'p1', externalId: 'r1' }],
  });
  // No worker: the job stays queued, the easiest state to abort.
  victimJobId = await requestCancellation(api, victim, 'bulkCancel', { ids: [reward?.id] });
});

afterAll(async () => {
  redis?.disconnect();
});

const abort = (merchant: MerchantFixture, jobId: string) =>
  api.post('/api/v1/integration/jobs/cancel', signedBody(merchant, { jobId }));

describe('job ids that name a shard', () => {
  it("do not show or abort another merchant's job on another shard", async () => {
    const [intruder, victim] = merchants as [MerchantFixture, MerchantFixture];
    expect(jobShard(victimJobId)).toBe(layout.merchantShard(victim.id));
    expect(jobShard(victimJobId)).not.toBe(layout.merchantShard(intruder.id));

    expect((await fetchJobStatus(api, intruder, victimJobId)).status).toBe(404);
    expect((await abort(intruder, victimJobId)).status).toBe(404);
    // Nothing was marked, and the job is still queued for its merchant.
    expect(await redis.exists(`${layout.jobPrefix(victimJobId)}:abort:${victimJobId}`)).toBe(0);
    const status = await fetchJobStatus(api, victim, victimJobId);
    expect(status.status).toBe(200);
    expect(((await status.json()) as { state: string }).state).toBe('queued');
  });

  it('answer an id naming a shard the deployment does not have, or the unsharded prefix, as not found', async () => {
    const [intruder] = merchants as [MerchantFixture];
    // The victim's id moved to shard 200, and to a v4 id (the plain prefix): neither holds the job.
    const elsewhere = [`c8${victimJobId.slice(2)}`, `${victimJobId.slice(0, 14)}4${victimJobId.slice(15)}`];
    for (const jobId of [...elsewhere, shardJobId(255), shardJobId(null)]) {
      expect((await fetchJobStatus(api, intruder, jobId)).status, jobId).toBe(404);
      expect((await abort(intruder, jobId)).status, jobId).toBe(404);
    }
    // And they reached no key of a shard that does not exist.
    const stray: string[] = [];
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(
        cursor,
        'MATCH',
        `${env.queuePrefix.slice(0, -1)}-2[0-9][0-9]}*`,
        'COUNT',
        1000,
      );
      cursor = next;
      stray.push(...keys);
    } while (cursor !== '0');
    expect(stray).toEqual([]);
  });
});
