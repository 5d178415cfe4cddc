import type { RedisConnection } from '../redis/redis.js';
import { keyLifetimes, merchantJobsKey, merchantTurnsKey } from '../redis/redis-keys.js';
import type { ShardLayout } from '../redis/shards.js';

/**
 * Fair turns between merchants on the bulk queue, and each merchant's cap of queued bulk jobs.
 *
 * BullMQ's open-source queue has no groups, but it has priorities: a lower number runs first, and
 * jobs of equal priority run in the order they came. Every bulk item (a merchant's job, or a part of
 * a split job) is given a *turn* as its priority: roughly its place in its own merchant's line. A
 * merchant with nothing waiting gets turn 1; one with 40 items waiting gets turn 41 or later. So the
 * queue serves the first item of every merchant, then the second of every merchant, and so on: a
 * merchant's job waits only for the items already running and for at most one item of each other
 * merchant per turn ahead of it — never for another merchant's whole backlog.
 *
 * Two sorted sets per merchant (redis-keys.ts), under the merchant's shard prefix (shards.ts), so in one
 * Redis Cluster slot with each other and with the merchant's queues. Turns order the items of one shard's
 * bulk queue; the shards themselves take turns in the worker (workers.ts):
 * - `turns`: the merchant's bulk items that wait (member = job id, score = its turn). An item leaves
 *   when a worker starts it. A new item's turn is max(waiting + 1, highest waiting turn), so a
 *   merchant's own items keep their order and turns stay small (bounded by the items waiting).
 * - `jobs`: the merchant's bulk jobs queued or running (parts not counted), for `maxQueuedJobs`. A job
 *   leaves when it finishes. An entry whose job is gone (a process died between two steps) is pruned
 *   when the cap is reached, by looking the job up; so the cap never stays wrongly full.
 *
 * Everything is one short Lua script per step: atomic, so two API replicas cannot both take the last
 * place under the cap.
 *
 * Both sets get a lifetime (keyLifetimes.merchantTurnsMs, 7 days) refreshed on every write: a merchant
 * that stops sending bulk work leaves nothing behind for good, whatever a process that died between
 * two steps left in them.
 */

/** ARGV[4]: the sets' lifetime (ms). */
const TAKE_TURN = `
local limit = tonumber(ARGV[3])
if limit > 0 then
  local queued = redis.call('ZCARD', KEYS[1])
  if queued >= limit then return {0, queued} end
  redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
  redis.call('PEXPIRE', KEYS[1], ARGV[4])
end
local waiting = redis.call('ZCARD', KEYS[2])
local turn = waiting + 1
local last = redis.call('ZRANGE', KEYS[2], -1, -1, 'WITHSCORES')
if last[2] and tonumber(last[2]) > turn then turn = tonumber(last[2]) end
redis.call('ZADD', KEYS[2], turn, ARGV[1])
redis.call('PEXPIRE', KEYS[2], ARGV[4])
return {1, turn}
`;

/** ARGV[1]: the set's lifetime (ms); ARGV[2…]: the parts' ids. */
const TAKE_TURNS = `
local waiting = redis.call('ZCARD', KEYS[1])
local first = waiting + 1
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
if last[2] and tonumber(last[2]) > first then first = tonumber(last[2]) end
for index = 2, #ARGV do
  redis.call('ZADD', KEYS[1], first + index - 2, ARGV[index])
end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return first
`;

/** Removes members (ARGV) from each set (KEYS) and refreshes the lifetime of what remains (an empty set is gone). */
const LEAVE = `
local lifetime = table.remove(ARGV, 1)
for _, key in ipairs(KEYS) do
  redis.call('ZREM', key, unpack(ARGV))
  redis.call('PEXPIRE', key, lifetime)
end
return 0
`;

/** BullMQ's largest priority. Turns stay far below it; the clamp only guards against surprises. */
const MAX_PRIORITY = 2_097_152;

export type TurnOutcome = { accepted: true; turn: number } | { accepted: false; queued: number };

export class MerchantTurns {
  constructor(
    private readonly redis: RedisConnection,
    private readonly layout: ShardLayout,
  ) {}

  private jobsKey(merchantId: string): string {
    return merchantJobsKey(this.layout.merchantPrefix(merchantId), merchantId);
  }

  private turnsKey(merchantId: string): string {
    return merchantTurnsKey(this.layout.merchantPrefix(merchantId), merchantId);
  }

  /**
   * A merchant's new bulk job: takes a place under the cap (`limit` jobs queued or running; 0 = no
   * cap) and a turn. Refused when the cap is full.
   */
  async takeTurn(merchantId: string, jobId: string, limit: number, now = Date.now()): Promise<TurnOutcome> {
    const [accepted, value] = (await this.redis.eval(
      TAKE_TURN,
      2,
      this.jobsKey(merchantId),
      this.turnsKey(merchantId),
      jobId,
      String(now),
      String(limit),
      keyLifetimes.merchantTurnsMs,
    )) as [number, number];
    return accepted === 1
      ? { accepted: true, turn: Math.min(value, MAX_PRIORITY) }
      : { accepted: false, queued: value };
  }

  /** The parts of a split job: consecutive turns, so they interleave with other merchants' work. */
  async takeTurns(merchantId: string, partIds: readonly string[]): Promise<number[]> {
    if (partIds.length === 0) return [];
    const first = (await this.redis.eval(
      TAKE_TURNS,
      1,
      this.turnsKey(merchantId),
      keyLifetimes.merchantTurnsMs,
      ...partIds,
    )) as number;
    return partIds.map((_, index) => Math.min(first + index, MAX_PRIORITY));
  }

  /** A bulk item has started: it no longer waits, so it no longer pushes the merchant's next turns back. */
  async started(merchantId: string, jobId: string): Promise<void> {
    await this.leave([this.turnsKey(merchantId)], [jobId]);
  }

  /** A merchant's bulk job finished (or never got stored): its place under the cap is free again. */
  async finished(merchantId: string, jobId: string): Promise<void> {
    await this.leave([this.jobsKey(merchantId), this.turnsKey(merchantId)], [jobId]);
  }

  private async leave(keys: string[], jobIds: string[]): Promise<void> {
    await this.redis.eval(LEAVE, keys.length, ...keys, keyLifetimes.merchantTurnsMs, ...jobIds);
  }

  /**
   * Drops entries whose job is finished or gone (`isLive` says which are not), and reports how many
   * remain. Only run when the cap is full, so its cost (one lookup per entry, at most the cap) is
   * paid by the merchant at the cap, not by everyone.
   */
  async prune(merchantId: string, isLive: (jobIds: string[]) => Promise<boolean[]>): Promise<number> {
    const members = await this.redis.zrange(this.jobsKey(merchantId), 0, -1);
    if (members.length === 0) return 0;
    const live = await isLive(members);
    const dead = members.filter((_, index) => !live[index]);
    if (dead.length > 0) {
      await this.leave([this.jobsKey(merchantId), this.turnsKey(merchantId)], dead);
    }
    return members.length - dead.length;
  }
}
