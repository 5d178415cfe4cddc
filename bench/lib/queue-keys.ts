import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { queueNames } from '../../src/shared/redis/redis-keys.js';

/**
 * The run's own queue prefix in Redis (a hash tag, as in production). Only keys under it are ever
 * deleted, so other queues on the same Redis (a developer's, the tests') are never touched.
 */
export class QueueKeys {
  private readonly redis: Redis;

  constructor(
    redisUrl: string,
    readonly prefix: string,
  ) {
    this.redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 2, connectionName: 'rewards-bench' });
    this.redis.on('error', () => {});
  }

  async connect(): Promise<void> {
    await this.redis.connect();
  }

  /** Deletes every key of the prefix; returns how many there were. */
  async deleteAll(): Promise<number> {
    let deleted = 0;
    let cursor = '0';
    do {
      const [next, keys] = await this.redis.scan(cursor, 'MATCH', `${escapeGlob(this.prefix)}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) deleted += await this.redis.unlink(...keys);
    } while (cursor !== '0');
    return deleted;
  }

  /** How many keys the prefix holds now (a SCAN, so a count taken while jobs come and go). */
  async countKeys(): Promise<number> {
    let count = 0;
    let cursor = '0';
    do {
      const [next, keys] = await this.redis.scan(cursor, 'MATCH', `${escapeGlob(this.prefix)}:*`, 'COUNT', 1000);
      cursor = next;
      count += keys.length;
    } while (cursor !== '0');
    return count;
  }

  /** BullMQ's job counts of a queue under the run's prefix (waiting, active, delayed, prioritized …). */
  async jobCounts(queueName: string): Promise<Record<string, number>> {
    const queue = new Queue(queueName, { connection: this.redis, prefix: this.prefix });
    try {
      return await queue.getJobCounts();
    } finally {
      await queue.close();
    }
  }

  async serverVersion(): Promise<string> {
    const info = await this.redis.info('server');
    return /^redis_version:(.+)$/m.exec(info)?.[1]?.trim() ?? 'unknown';
  }

  /**
   * The single-cancel queue, paused or resumed for every worker at once (BullMQ's global pause): lets
   * a run store all its jobs first and then time the workers alone.
   */
  async setSingleCancelQueuePaused(paused: boolean): Promise<void> {
    const queue = new Queue(queueNames.single, { connection: this.redis, prefix: this.prefix });
    try {
      await (paused ? queue.pause() : queue.resume());
    } finally {
      await queue.close();
    }
  }

  /** True when a job of this id is stored in the named queue under the run's prefix. */
  async hasJob(queueName: string, jobId: string): Promise<boolean> {
    return (await this.redis.exists(`${this.prefix}:${queueName}:${jobId}`)) === 1;
  }

  close(): void {
    this.redis.disconnect();
  }
}

/** `{bench-1}` as a literal SCAN pattern: braces are not special, but these are. */
function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, (character) => `\\${character}`);
}
