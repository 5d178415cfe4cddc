import type { Queue } from 'bullmq';
import type { Db } from '../db/client.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import type { RedisConnection } from '../queue/redis.js';
import { keyLifetimes, webhookPendingKey } from '../queue/redis-keys.js';
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
 * KEYS[1]: the merchant's pending set. ARGV[1]: the new event id, ARGV[2]: now (ms), ARGV[3]: the cap,
 * ARGV[4]: the set's lifetime (ms). Adds the event (once: a repeated event keeps its place) and answers
 * the oldest others past the cap, taken out of the set.
 */
const ADD_PENDING = `
redis.call('ZADD', KEYS[1], 'NX', ARGV[2], ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
local over = redis.call('ZCARD', KEYS[1]) - tonumber(ARGV[3])
if over <= 0 then return {} end
local candidates = redis.call('ZRANGE', KEYS[1], 0, over)
local oldest = {}
for _, id in ipairs(candidates) do
  if id ~= ARGV[1] and #oldest < over then oldest[#oldest + 1] = id end
end
redis.call('ZREM', KEYS[1], unpack(oldest))
return oldest
`;

export type DropReason = 'pending_cap' | 'disabled';

export interface PendingDeps {
  db: Db;
  logger: Logger;
  metrics: Metrics;
  redis: RedisConnection;
  prefix: string;
  /** The webhooks queue (queues.ts). */
  queue: Queue;
}

/** Adds an event to its merchant's pending set; answers the ids of the oldest ones now over the cap. */
export async function addPending(
  deps: Pick<PendingDeps, 'prefix' | 'redis'>,
  merchantId: string,
  eventId: string,
  cap: number,
): Promise<string[]> {
  const client = deps.redis;
  return (await client.eval(
    ADD_PENDING,
    1,
    webhookPendingKey(deps.prefix, merchantId),
    eventId,
    Date.now(),
    cap,
    keyLifetimes.webhookPendingMs,
  )) as string[];
}

/** An event reached its final outcome: it no longer counts against its merchant's cap. */
export async function finishPending(deps: Pick<PendingDeps, 'prefix' | 'redis'>, merchantId: string, eventId: string) {
  const client = deps.redis;
  await client.zrem(webhookPendingKey(deps.prefix, merchantId), eventId);
}

/** Takes every pending event of the merchant out of its set (its endpoint was disabled). */
export async function takeAllPending(
  deps: Pick<PendingDeps, 'prefix' | 'redis'>,
  merchantId: string,
): Promise<string[]> {
  const client = deps.redis;
  const key = webhookPendingKey(deps.prefix, merchantId);
  const [[, ids]] = (await client.multi().zrange(key, 0, -1).del(key).exec()) as [[null, string[]], unknown];
  return ids;
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
