import type { Queue } from 'bullmq';
import type { Db } from '../db/client.js';
import type { RedisConnection } from '../redis/redis.js';
import { keyLifetimes, webhookPendingIndexKey, webhookPendingKey } from '../redis/redis-keys.js';
import type { ShardLayout } from '../redis/shards.js';
import type { Logger } from '../telemetry/logger.js';
import type { Metrics } from '../telemetry/metrics.js';
import { webhookDeliveryJobSchema } from './webhook-catalogue.js';
import { type DroppedWebhookEvent, recordDroppedEvents } from './webhooks.repository.js';

/**
 * Each merchant's pending webhook events: a sorted set of event ids scored by when each was queued
 * (redis-keys.ts), kept beside the queue so that a dead receiver holds a bounded part of Redis. An
 * event enters in the script that checks the cap, just before its job is added, and leaves at its
 * final outcome (delivered, failed, dropped). Past WEBHOOK_MAX_PENDING_PER_MERCHANT, the same script
 * takes the merchant's oldest pending events out, and they are given up: recorded `dropped` with the
 * reason, counted, and their jobs removed from the queue. Never silently.
 */

/**
 * KEYS[1]: the merchant's pending set, KEYS[2]: the index of merchants by pending count. ARGV[1]: the
 * new event id, ARGV[2]: now (ms), ARGV[3]: the cap, ARGV[4]: the set's lifetime (ms), ARGV[5]: the
 * merchant id. Adds the event (once: a repeated event keeps its place) and answers the oldest others
 * past the cap, taken out of the set; the index then holds the merchant's count.
 */
const ADD_PENDING = `
redis.call('ZADD', KEYS[1], 'NX', ARGV[2], ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
local over = redis.call('ZCARD', KEYS[1]) - tonumber(ARGV[3])
local oldest = {}
if over > 0 then
  local candidates = redis.call('ZRANGE', KEYS[1], 0, over)
  for _, id in ipairs(candidates) do
    if id ~= ARGV[1] and #oldest < over then oldest[#oldest + 1] = id end
  end
  redis.call('ZREM', KEYS[1], unpack(oldest))
end
redis.call('ZADD', KEYS[2], redis.call('ZCARD', KEYS[1]), ARGV[5])
redis.call('PEXPIRE', KEYS[2], ARGV[4])
return oldest
`;

/** KEYS as ADD_PENDING's; ARGV[1]: the event that ended, ARGV[2]: the merchant id. */
const FINISH_PENDING = `
redis.call('ZREM', KEYS[1], ARGV[1])
local left = redis.call('ZCARD', KEYS[1])
if left == 0 then redis.call('ZREM', KEYS[2], ARGV[2]) else redis.call('ZADD', KEYS[2], 'XX', left, ARGV[2]) end
return left
`;

/** Merchants named in `gateway_webhook_pending`; the others are summed under merchant="other". */
const PENDING_TOP_MERCHANTS = 20;

export type DropReason = 'pending_cap' | 'disabled';

export interface PendingDeps {
  db: Db;
  logger: Logger;
  metrics: Metrics;
  redis: RedisConnection;
  /** Each merchant's pending set is under its queue shard prefix (shards.ts). */
  shards: ShardLayout;
  /** The webhooks queue (queues.ts). */
  queue: Queue;
}

/**
 * A merchant's pending set and the index of merchants by pending count beside it: both under the
 * merchant's queue shard prefix (one slot for the scripts that change both; one index per shard).
 */
function pendingKeys(shards: ShardLayout, merchantId: string): [string, string] {
  const prefix = shards.merchantPrefix(merchantId);
  return [webhookPendingKey(prefix, merchantId), webhookPendingIndexKey(prefix)];
}

/** Adds an event to its merchant's pending set; answers the ids of the oldest ones now over the cap. */
export async function addPending(
  deps: Pick<PendingDeps, 'shards' | 'redis'>,
  merchantId: string,
  eventId: string,
  cap: number,
): Promise<string[]> {
  const client = deps.redis;
  return (await client.eval(
    ADD_PENDING,
    2,
    ...pendingKeys(deps.shards, merchantId),
    eventId,
    Date.now(),
    cap,
    keyLifetimes.webhookPendingMs,
    merchantId,
  )) as string[];
}

/** An event reached its final outcome: it no longer counts against its merchant's cap. */
export async function finishPending(deps: Pick<PendingDeps, 'shards' | 'redis'>, merchantId: string, eventId: string) {
  const client = deps.redis;
  await client.eval(FINISH_PENDING, 2, ...pendingKeys(deps.shards, merchantId), eventId, merchantId);
}

/** How many of the merchant's events are pending now (a recovery queues more only while there is room). */
export async function pendingCount(deps: Pick<PendingDeps, 'shards' | 'redis'>, merchantId: string): Promise<number> {
  const [key] = pendingKeys(deps.shards, merchantId);
  return deps.redis.zcard(key);
}

/** Takes every pending event of the merchant out of its set (its endpoint was disabled). */
export async function takeAllPending(
  deps: Pick<PendingDeps, 'shards' | 'redis'>,
  merchantId: string,
): Promise<string[]> {
  const client = deps.redis;
  const [key, index] = pendingKeys(deps.shards, merchantId);
  const [[, ids]] = (await client.multi().zrange(key, 0, -1).del(key).zrem(index, merchantId).exec()) as [
    [null, string[]],
    unknown,
  ];
  return ids;
}

/**
 * `gateway_webhook_pending` at scrape time: the PENDING_TOP_MERCHANTS merchants with the most pending
 * events by name, the rest summed as merchant="other" (bounded cardinality whatever the merchant count).
 * One command per queue shard over the merchants that have pending events there.
 */
export async function refreshWebhookPending(deps: Pick<PendingDeps, 'shards' | 'redis' | 'metrics'>): Promise<void> {
  try {
    const prefixes = deps.shards.allShards().map((shard) => deps.shards.shardPrefix(shard));
    const counts: Array<[string, number]> = [];
    for (const flat of await Promise.all(
      prefixes.map((prefix) => deps.redis.zrevrange(webhookPendingIndexKey(prefix), 0, -1, 'WITHSCORES')),
    )) {
      for (let index = 0; index < flat.length; index += 2)
        counts.push([flat[index] as string, Number(flat[index + 1])]);
    }
    counts.sort((a, b) => b[1] - a[1]);
    deps.metrics.webhookPending.reset();
    let other = 0;
    counts.forEach(([merchant, count], rank) => {
      if (rank < PENDING_TOP_MERCHANTS) deps.metrics.webhookPending.set({ merchant }, count);
      else other += count;
    });
    deps.metrics.webhookPending.set({ merchant: 'other' }, other);
  } catch {
    // Redis away: keep the last values; readiness reports the outage.
  }
}

/**
 * Gives up events taken out of the pending set: reads each one's job (its payload is the row's), records
 * them `dropped` with `detail` as the reason, and only then removes their jobs (a job an attempt holds
 * right now stays; that attempt finds the row dropped). An event whose job has left Redis already ended
 * on its own. If Postgres cannot take the record, the jobs are left to run (logged): an event is never
 * dropped without its record.
 */
export async function dropEvents(
  deps: PendingDeps,
  merchantId: string,
  eventIds: readonly string[],
  reason: DropReason,
  detail: string,
): Promise<void> {
  if (eventIds.length === 0) return;
  const jobs = await Promise.all(eventIds.map((id) => deps.queue.getJob(id)));
  const events: DroppedWebhookEvent[] = [];
  for (const job of jobs) {
    const parsed = webhookDeliveryJobSchema.safeParse(job?.data);
    if (parsed.success) events.push({ ...parsed.data, id: parsed.data.eventId, reason: detail });
  }
  try {
    await recordDroppedEvents(deps.db, events);
  } catch (error) {
    deps.logger.error(
      { err: error, merchantId, events: events.length, reason },
      'could not record dropped webhook events; they stay queued',
    );
    return;
  }
  await Promise.all(events.map((event) => deps.queue.remove(event.id).catch(() => 0)));
  if (events.length > 0) {
    deps.metrics.webhookEventsDropped.inc({ reason }, events.length);
    deps.logger.warn({ merchantId, events: events.length, reason, detail }, 'webhook events dropped');
  }
}
