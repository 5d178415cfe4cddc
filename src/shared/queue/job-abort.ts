import type { RedisConnection } from './redis.js';

/**
 * A merchant's request to abort a job: one small key per aborted job, under the queue prefix (the
 * queues' Cluster slot), kept as long as failed jobs are (7 days). Workers look for it before every
 * batch, whichever replica runs the job or one of its parts; job status reads it beside the job.
 */
const ABORT_TTL_SECONDS = 7 * 24 * 60 * 60;

export function abortKey(prefix: string, jobId: string): string {
  return `${prefix}:abort:${jobId}`;
}

export async function requestAbort(redis: RedisConnection, prefix: string, jobId: string): Promise<void> {
  await redis.set(abortKey(prefix, jobId), String(Date.now()), 'EX', ABORT_TTL_SECONDS);
}

export async function isAbortRequested(redis: RedisConnection, prefix: string, jobId: string): Promise<boolean> {
  return (await redis.exists(abortKey(prefix, jobId))) === 1;
}
