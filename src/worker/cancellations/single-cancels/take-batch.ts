import { type BatchMember, singleCancelDeduplicationKey } from '../../../shared/cancellations/member-ids.js';
import type { RedisConnection } from '../../../shared/redis/redis.js';
import { abortKey, cancelDedupKey } from '../../../shared/redis/redis-keys.js';

/**
 * A worker taking a batch: each member's abort mark (KEYS[i]), and its dedup key (KEYS[n + i]) deleted
 * if it still names this member (ARGV[i]): from now on an identical request gets a job of its own, so
 * the key is not needed, and Redis keeps dedup keys for waiting requests only.
 */
const TAKE_BATCH = `
local n = #ARGV
local marks = {}
for index = 1, n do
  marks[index] = redis.call('GET', KEYS[index])
  local dedup = KEYS[n + index]
  if redis.call('GET', dedup) == ARGV[index] then redis.call('DEL', dedup) end
end
return marks
`;

/** The members' abort marks (null: not aborted), in order; their dedup keys are released. */
export async function takeBatch(
  redis: RedisConnection,
  prefix: string,
  merchantId: string,
  members: readonly BatchMember[],
): Promise<Array<string | null>> {
  if (members.length === 0) return [];
  const keys = [
    ...members.map((member) => abortKey(prefix, member.jobId)),
    ...members.map((member) => cancelDedupKey(prefix, singleCancelDeduplicationKey(merchantId, member))),
  ];
  return (await redis.eval(TAKE_BATCH, keys.length, ...keys, ...members.map((member) => member.jobId))) as Array<
    string | null
  >;
}
