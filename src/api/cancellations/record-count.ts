import { AppError } from '../../shared/errors/errors.js';

/**
 * How many records one merchant may have made in Redis within a record's lifetime: Idempotency-Key
 * records (24 h) and version-2 replay records (their signature's window). One merchant sending a fresh
 * key with every request could otherwise fill Redis, and with `noeviction` every merchant's cancels
 * would then fail. Past the bound a request that would make a new record is refused (429 errorCode 7);
 * a repeat of a record that exists still replays (the count is only read when a record is made).
 *
 * The count is a small hash per merchant and kind of record: one field per bucket of time (a 24th of
 * the lifetime), holding how many records were made in it. The buckets of one lifetime and the current
 * one are summed, so every record still alive is counted (a record made in an older bucket has
 * expired), and a record is counted for at most a lifetime and a bucket. Checked and added to inside
 * the script that makes the record (idempotency.ts), in the same round trip and atomically, so
 * replicas racing cannot pass the bound together.
 */

/** Buckets per lifetime: a refused merchant is let in again within a 24th of it (an hour for 24 h). */
const BUCKETS_PER_LIFETIME = 24;

export interface RecordCount {
  /** The merchant's count of this kind of record (redis-keys.ts). */
  key: string;
  /** Most records alive at once; 0: no bound. */
  bound: number;
  /** How long a record of this kind lives at most, in ms. */
  lifetimeMs: number;
}

/**
 * The Lua that checks and counts, to run before a record is made: refuses with `{oldest bucket}` past
 * the bound. `KEYS[count]` the count's hash; `ARGV[bound]`, `ARGV[bucket]` the current bucket,
 * `ARGV[buckets]` how many are summed, `ARGV[ttl]` the hash's lifetime (ms), refreshed on each record.
 */
export function countScript(keyIndex: number, argIndex: number): string {
  const key = `KEYS[${keyIndex}]`;
  const arg = (offset: number) => `ARGV[${argIndex + offset}]`;
  return `
local bound = tonumber(${arg(0)})
if bound > 0 then
  local bucket = tonumber(${arg(1)})
  local oldestCounted = bucket - tonumber(${arg(2)}) + 1
  local fields = redis.call('HGETALL', ${key})
  local total, oldest = 0, bucket
  for i = 1, #fields, 2 do
    local at = tonumber(fields[i])
    if at < oldestCounted then
      redis.call('HDEL', ${key}, fields[i])
    else
      total = total + tonumber(fields[i + 1])
      if at < oldest then oldest = at end
    end
  end
  if total >= bound then return {oldest} end
  redis.call('HINCRBY', ${key}, ${arg(1)}, 1)
  redis.call('PEXPIRE', ${key}, ${arg(3)})
end
`;
}

function bucketMs(count: RecordCount): number {
  return Math.max(1, Math.ceil(count.lifetimeMs / BUCKETS_PER_LIFETIME));
}

/** The script's arguments for `count` at `now`, in the order countScript reads them. */
export function countArguments(count: RecordCount, now: number): [number, number, number, number] {
  const size = bucketMs(count);
  const buckets = BUCKETS_PER_LIFETIME + 1;
  return [count.bound, Math.floor(now / size), buckets, buckets * size];
}

/** The 429 for a refused record: Retry-After is when the oldest counted bucket stops counting. */
export function recordBoundReached(count: RecordCount, what: string, oldestBucket: number, now: number): AppError {
  const size = bucketMs(count);
  const freedAt = (oldestBucket + BUCKETS_PER_LIFETIME + 1) * size;
  return new AppError('RATE_LIMITED', `Too many ${what} for this merchant (at most ${count.bound} at once)`, {
    retryAfterSeconds: Math.max(1, Math.ceil((freedAt - now) / 1_000)),
    logDetail: `${what}: bound ${count.bound} reached`,
  });
}
