import type { RedisConnection } from '../../shared/redis/redis.js';
import { keyLifetimes, webhookInflightKey } from '../../shared/redis/redis-keys.js';
import type { ShardLayout } from '../../shared/redis/shards.js';

/**
 * Per-merchant slots for webhook attempts, across every worker (BullMQ's open-source queue has no
 * groups). A merchant's attempts in flight are a sorted set of event ids scored by when each slot
 * expires (redis-keys.ts); an attempt takes a slot before it sends and frees it as soon as it has an
 * answer, so a receiver that hangs holds WEBHOOK_MERCHANT_CONCURRENCY of the delivery slots, not all of
 * them. A slot outlives its attempt's own bound (WEBHOOK_TIMEOUT_MS) by a margin only: a worker that
 * dies mid-attempt leaves a slot that expires, and expired slots are pruned by the next take.
 */

/**
 * KEYS[1]: the merchant's in-flight set. ARGV[1]: the event id, ARGV[2]: the slot's lifetime (ms),
 * ARGV[3]: the merchant's limit. Redis's own clock, so that workers' clocks need not agree. 1: taken (or
 * already this event's), 0: every slot is held.
 */
const TAKE_SLOT = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZSCORE', KEYS[1], ARGV[1]) or redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[3]) then
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
`;

export interface MerchantSlots {
  /** True when the attempt may send now; false when the merchant's slots are all held. */
  take(merchantId: string, eventId: string): Promise<boolean>;
  release(merchantId: string, eventId: string): Promise<void>;
}

export function createMerchantSlots(
  redis: RedisConnection,
  shards: ShardLayout,
  options: { limit: number; attemptTimeoutMs: number },
): MerchantSlots {
  const lifetimeMs = options.attemptTimeoutMs + keyLifetimes.webhookSlotMarginMs;
  return {
    async take(merchantId, eventId) {
      const key = webhookInflightKey(shards.merchantPrefix(merchantId), merchantId);
      return (await redis.eval(TAKE_SLOT, 1, key, eventId, lifetimeMs, options.limit)) === 1;
    },
    async release(merchantId, eventId) {
      await redis.zrem(webhookInflightKey(shards.merchantPrefix(merchantId), merchantId), eventId);
    },
  };
}

/** The first wait of an attempt turned away: a receiver that answers quickly frees its slot within it. */
const FIRST_BUSY_DELAY_MS = 250;
/** Past this many doublings the attempt bound is the ceiling anyway; it keeps 2 ** n a small number. */
const MAX_BUSY_DOUBLINGS = 16;

/**
 * How long an attempt that found its merchant's slots held waits before it looks again: doubling from
 * 250 ms with each time it was turned away (BullMQ's `attemptsStarted` counts them, `attemptsMade`
 * does not), up to the attempt bound (a held slot frees within it), with jitter so a merchant's
 * waiting events do not all come back at once. So a merchant with many events waiting costs the queue
 * about (waiting / WEBHOOK_TIMEOUT_MS) looks per second, not a busy loop.
 */
export function busyDelayMs(timesTurnedAway: number, attemptTimeoutMs: number, random = Math.random): number {
  const doublings = Math.max(0, Math.min(timesTurnedAway - 1, MAX_BUSY_DOUBLINGS));
  const ceiling = Math.min(FIRST_BUSY_DELAY_MS * 2 ** doublings, Math.max(attemptTimeoutMs, FIRST_BUSY_DELAY_MS));
  return Math.round(ceiling * (0.5 + random() / 2));
}
