import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ShardLayout } from '../../src/shared/redis/shards.js';
import { startTestApi, type TestApi } from '../helpers/api.js';
import { cancelPaths } from '../helpers/cancellation.js';
import { createMerchant, type MerchantFixture } from '../helpers/fixtures.js';
import { startService } from '../helpers/processes.js';
import { signedBody } from '../helpers/signing.js';
import { useTestContext } from '../helpers/test-context.js';
import { eventually } from '../helpers/worker.js';

/**
 * What goes wrong with queue shards, and how it is answered: a worker told to consume shards the
 * deployment does not have refuses to start, naming the setting; a backlog over QUEUE_MAX_WAITING in one
 * shard refuses that shard's merchants (503), not the others'.
 */

const SHARDS = 4;
const { env } = useTestContext({ settings: { QUEUE_SHARDS: String(SHARDS), QUEUE_MAX_WAITING: '2' } });

describe('queue shard settings', { timeout: 60_000 }, () => {
  it('a worker pinned to shards outside QUEUE_SHARDS refuses to start and names WORKER_SHARDS', async () => {
    await expect(startService('worker', env, { QUEUE_SHARDS: String(SHARDS), WORKER_SHARDS: '2-9' })).rejects.toThrow(
      /WORKER_SHARDS: shards are numbered 0 to 3 \(QUEUE_SHARDS=4\): 4, 5, 6, 7, 8, 9/,
    );
    await expect(startService('worker', env, { QUEUE_SHARDS: '0' })).rejects.toThrow(/QUEUE_SHARDS/);
  });
});

describe('a backlog in one shard', { timeout: 60_000 }, () => {
  let api: TestApi;
  const merchants: MerchantFixture[] = [];
  beforeAll(async () => {
    api = await startTestApi(env);
    const layout = new ShardLayout(env.config);
    while (merchants.length < 2) {
      const merchant = await createMerchant(env.db);
      if (merchants.some((m) => layout.merchantShard(m.id) === layout.merchantShard(merchant.id))) continue;
      merchants.push(merchant);
    }
  });
  afterAll(async () => {
    await api?.close();
  });

  const bulk = (merchant: MerchantFixture, externalId: string) =>
    api.post(cancelPaths.bulkCancel, signedBody(merchant, { externalIds: [externalId] }));

  it("refuses that shard's merchants past QUEUE_MAX_WAITING (503), and not another shard's", async () => {
    const [busy, other] = merchants as [MerchantFixture, MerchantFixture];
    // No worker: busy's jobs wait. The count is read at most once a second, so keep asking until refused.
    let sent = 0;
    const refused = await eventually(
      async () => {
        const answer = await bulk(busy, `backlog-${sent++}`);
        if (answer.status === 200) return undefined;
        return answer;
      },
      { timeoutMs: 20_000, intervalMs: 200, what: 'the busy shard to refuse' },
    );
    expect(refused.status).toBe(503);
    expect(((await refused.json()) as { errorCode: number }).errorCode).toBe(11);
    expect(sent).toBeGreaterThanOrEqual(3);
    // The other merchant's shard has nothing waiting: accepted.
    const accepted = await bulk(other, 'unaffected');
    expect(accepted.status).toBe(200);
  });
});
