import type { RedisConnection } from './redis.js';
import { abortKey, keyLifetimes } from './redis-keys.js';
import type { ShardLayout } from './shards.js';

/**
 * A merchant's request to abort a job: one small key per aborted job (redis-keys.ts), kept as long as
 * failed jobs are, under the job's shard prefix (its id names it: shards.ts). Workers look for it before every batch, whichever replica runs the job or one of
 * its parts; job status reads it beside the job.
 */

export async function requestAbort(redis: RedisConnection, layout: ShardLayout, jobId: string): Promise<void> {
  await redis.set(abortKey(layout.jobPrefix(jobId), jobId), String(Date.now()), 'EX', keyLifetimes.abortMarkSeconds);
}

export async function isAbortRequested(redis: RedisConnection, layout: ShardLayout, jobId: string): Promise<boolean> {
  return (await redis.exists(abortKey(layout.jobPrefix(jobId), jobId))) === 1;
}
