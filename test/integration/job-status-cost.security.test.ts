import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { beforeAll, describe, expect, it } from 'vitest';
import { fetchJobStatus } from '../helpers/cancellation.js';
import { createMerchant, type MerchantFixture } from '../helpers/fixtures.js';
import { monitorRedis } from '../helpers/redis-monitor.js';
import { useTestContext } from '../helpers/test-context.js';

/**
 * Job status costs O(1) in Redis whatever the backlog: with 100,000 single cancels waiting, a status
 * request for an id Redis does not hold reads two job hashes and nothing else (BullMQ's own state
 * lookup walks the waiting lists: LPOS over 100,000 entries per request). Checked on the commands
 * Redis executes, seen through MONITOR, not on time.
 */

const WAITING = 100_000;

const { env, api } = useTestContext({ api: true });
let merchant: MerchantFixture;

beforeAll(async () => {
  merchant = await createMerchant(env.db);
  // No worker runs: every job stays waiting.
  const queue = api.deps.producer.queues.forShard(null).queues.cancel;
  for (let start = 0; start < WAITING; start += 5_000) {
    await queue.addBulk(
      Array.from({ length: 5_000 }, (_, index) => ({
        name: 'cancelBatch',
        data: {
          merchantId: merchant.id,
          requests: [{ jobId: randomUUID(), acceptedAt: Date.now(), externalId: `waiting-${start + index}` }],
        },
      })),
    );
  }
}, 120_000);

/** Every command Redis runs (also inside scripts) that names this file's queue prefix, while `work` runs. */
async function commandsDuring(work: () => Promise<void>): Promise<string[]> {
  const monitor = await monitorRedis(env.redisUrl);
  try {
    await work();
    // MONITOR output trails the commands themselves: a marker command closes the window.
    const marker = new Redis(env.redisUrl);
    await marker.exists(`${env.queuePrefix}:marker`);
    marker.disconnect();
    const deadline = Date.now() + 5_000;
    const mine = () => monitor.commands.filter((args) => args.some((arg) => arg.includes(env.queuePrefix)));
    while (!mine().some((args) => args[0]?.toUpperCase() === 'EXISTS') && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return mine().map((args) => args[0]?.toUpperCase() ?? '');
  } finally {
    monitor.stop();
  }
}

describe('job status with a large backlog', { timeout: 60_000 }, () => {
  it('reads the job hashes only, never a list of jobs', async () => {
    const waiting = await api.deps.producer.queues.forShard(null).queues.cancel.getWaitingCount();
    expect(waiting).toBe(WAITING);
    let status = 0;
    const commands = await commandsDuring(async () => {
      const response = await fetchJobStatus(api, merchant, '00000000-0000-4000-8000-00000000dead');
      status = response.status;
    });
    expect(status).toBe(404);
    const listCommands = commands.filter((command) =>
      ['LPOS', 'LRANGE', 'LLEN', 'LINDEX', 'ZRANGE', 'ZRANGEBYSCORE', 'ZSCAN', 'SCAN', 'KEYS', 'SMEMBERS'].includes(
        command,
      ),
    );
    expect(listCommands).toEqual([]);
    // One script per request (EVAL or EVALSHA), and inside it two HMGETs: the bulk job's hash, and the
    // hash of the batch the id would belong to if it were a single cancel (single cancels have no hash).
    expect(commands.filter((command) => command === 'HMGET')).toHaveLength(2);
  });
});
