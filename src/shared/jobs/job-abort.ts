import type { RedisConnection } from '../redis/redis.js';
import { abortKey, keyLifetimes, RAN_TO_END } from '../redis/redis-keys.js';
import type { ShardLayout } from '../redis/shards.js';

/**
 * A merchant's request to abort a job: one small key per aborted job (redis-keys.ts), kept as long as
 * failed jobs are, under the job's shard prefix (its id names it: shards.ts). Workers look for it before every batch, whichever replica runs the job or one of
 * its parts; job status reads it beside the job.
 *
 * The same key is where a bulk job's end is decided, once (`decideEnd`): an abort that arrives after a
 * job ran to its end finds RAN_TO_END and is refused, so the audit row, the job status, the metric and
 * the webhook event, which all read this key, can never tell different stories about one job.
 */

/** Sets the mark unless the job's end was already decided as run to its end; 1 when set. */
const REQUEST_ABORT = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'EX', ARGV[3])
return 1`;

/** The outcome, decided at the first call and unchanged by every later one: 1 cancelled, 0 completed. */
const DECIDE_END = `
local mark = redis.call('GET', KEYS[1])
if not mark then
  redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
  return 0
end
if mark == ARGV[1] then return 0 end
return 1`;

/** False when the job has already run to its end (its outcome decided as `completed`): nothing is marked. */
export async function requestAbort(redis: RedisConnection, layout: ShardLayout, jobId: string): Promise<boolean> {
  const marked = await redis.eval(
    REQUEST_ABORT,
    1,
    abortKey(layout.jobPrefix(jobId), jobId),
    RAN_TO_END,
    String(Date.now()),
    keyLifetimes.abortMarkSeconds,
  );
  return marked === 1;
}

export async function isAbortRequested(redis: RedisConnection, layout: ShardLayout, jobId: string): Promise<boolean> {
  const mark = await redis.get(abortKey(layout.jobPrefix(jobId), jobId));
  return mark !== null && mark !== RAN_TO_END;
}

/**
 * A bulk job's outcome, decided once, atomically with respect to the abort route: `cancelled` when an
 * abort was marked before this call, else `completed` (and from then on aborts are refused). A retry
 * of a job whose end was decided gets the same answer.
 */
export async function decideEnd(
  redis: RedisConnection,
  layout: ShardLayout,
  jobId: string,
): Promise<'completed' | 'cancelled'> {
  const aborted = await redis.eval(
    DECIDE_END,
    1,
    abortKey(layout.jobPrefix(jobId), jobId),
    RAN_TO_END,
    keyLifetimes.abortMarkSeconds,
  );
  return aborted === 1 ? 'cancelled' : 'completed';
}
