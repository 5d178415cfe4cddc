import type { JobsOptions, Queue } from 'bullmq';
import type { Config } from '../config/config.js';
import type { Db } from '../db/client.js';
import type { RedisConnection } from '../redis/redis.js';
import type { ShardLayout } from '../redis/shards.js';
import type { Logger } from '../telemetry/logger.js';
import type { Metrics } from '../telemetry/metrics.js';
import type { WebhookDeliveryJob } from './webhook-catalogue.js';
import type { ReopenedDelivery } from './webhook-delivery-log.repository.js';
import { addPending, dropEvents } from './webhook-pending.js';

/** What queueing an event needs: a worker's or an API process's own connections and the webhooks queue. */
export interface QueueingDeps {
  config: Config;
  db: Db;
  logger: Logger;
  metrics: Metrics;
  redis: RedisConnection;
  shards: ShardLayout;
  queue: Queue;
}

/**
 * Adds the event to its merchant's pending set (giving up the oldest past the cap), then queues it. The
 * event id is the job id: the same event queued twice while the first is in Redis is one job.
 */
export async function queueWebhookEvent(
  deps: QueueingDeps,
  data: WebhookDeliveryJob,
  options: Pick<JobsOptions, 'attempts'> = {},
): Promise<void> {
  const cap = deps.config.WEBHOOK_MAX_PENDING_PER_MERCHANT;
  const over = await addPending(deps, data.merchantId, data.eventId, cap);
  await deps.queue.add('webhookDelivery', data, { ...options, jobId: data.eventId });
  await dropEvents(deps, data.merchantId, over, 'pending_cap', `given up unsent: more than ${cap} events were pending`);
}

/**
 * Sends an event again whose row was just set `pending` (webhook-delivery-log.repository.ts), with the
 * same id (so the same `webhook-id`). The job that sent it before may still be in Redis under that id:
 * finished, it is removed so that the new one can take the id; waiting for a retry, it is made due now
 * (that retry is the new attempt); running, its attempt is the one the merchant gets.
 */
export async function resendWebhookEvent(
  deps: QueueingDeps,
  merchantId: string,
  delivery: ReopenedDelivery,
  options: Pick<JobsOptions, 'attempts'> = {},
): Promise<void> {
  const previous = await deps.queue.getJob(delivery.eventId);
  if (previous) {
    const state = await previous.getState();
    if (state === 'delayed') {
      await previous.promote().catch(() => {});
      return;
    }
    if (state === 'waiting' || state === 'active' || state === 'prioritized' || state === 'waiting-children') return;
    await previous.remove().catch(() => {});
  }
  await queueWebhookEvent(
    deps,
    {
      eventId: delivery.eventId,
      merchantId,
      type: delivery.type,
      jobId: delivery.jobId,
      body: delivery.body,
      priorAttempts: delivery.attempts,
    },
    options,
  );
}
