import type { RedisConnection } from '../../shared/redis/redis.js';

/**
 * Which merchant a job belongs to, as a field of its own in the job's hash (a bulk job's, or a single
 * cancel batch's), written by the API right after BullMQ stored the job and before the job id is
 * answered. Job status and abort read it there (job-status.ts) in O(1), not by searching the
 * serialised payload, whose layout is BullMQ's and JSON's business.
 */
export const JOB_OWNER_FIELD = 'owner';

/** Only on a hash that exists: a job removed meanwhile (an abort) must not leave a stray key behind. */
const RECORD_OWNER = `
if redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
  return 1
end
return 0
`;

/** True when the job's hash exists (and now names its owner); false when there is no such job. */
export async function recordJobOwner(redis: RedisConnection, jobHashKey: string, merchantId: string): Promise<boolean> {
  return (await redis.eval(RECORD_OWNER, 1, jobHashKey, JOB_OWNER_FIELD, merchantId.toLowerCase())) === 1;
}
