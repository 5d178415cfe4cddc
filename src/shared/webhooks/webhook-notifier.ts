import type { Queue } from 'bullmq';
import { LoadingCache } from '../cache/loading-cache.js';
import type { Config } from '../config/config.js';
import type { Db } from '../db/client.js';
import type { PublicJobStatus } from '../jobs/job-status-schema.js';
import { withDeadline } from '../process/deadline.js';
import type { RedisConnection } from '../redis/redis.js';
import type { ShardLayout } from '../redis/shards.js';
import type { Logger } from '../telemetry/logger.js';
import type { Metrics } from '../telemetry/metrics.js';
import { type WebhookDeliveryJob, type WebhookEventType, webhookEventId } from './webhook-catalogue.js';
import { queueWebhookEvent } from './webhook-queueing.js';
import { findWebhookStatus, recordDroppedEvents } from './webhooks.repository.js';

/** The reason recorded on an event not sent because its endpoint is disabled. */
export function disabledDetail(disabledReason: string): string {
  return `endpoint disabled: ${disabledReason}`;
}

/** What the notifier needs: a worker's or an API process's own connections. */
export interface NotifierDeps {
  config: Config;
  db: Db;
  logger: Logger;
  metrics: Metrics;
  /** For each merchant's pending set (webhook-pending.ts), beside the queue. */
  redis: RedisConnection;
  /** Where each merchant's pending set lives (shards.ts). */
  shards: ShardLayout;
  /** The webhooks queue (queues.ts); asked for per event, as the API builds its queues once Redis is reached. */
  queue: () => Queue;
}

interface JobFinishedEvent {
  merchantId: string;
  type: WebhookEventType;
  status: PublicJobStatus;
}

export interface WebhookNotifier {
  /**
   * Queues the event for the merchant's webhook when it has one that takes this event type; nothing
   * otherwise. Never throws: a failure is logged (the job's outcome must not depend on its webhook).
   */
  jobFinished(event: JobFinishedEvent): Promise<void>;
}

/** Which events a merchant's webhook takes, and why it is disabled if it is; null: the merchant has none. */
type Subscription = { events: readonly WebhookEventType[]; disabledReason: string | null } | null;

/**
 * How long jobFinished waits for Redis to take the event before it returns (and logs): a healthy Redis
 * takes it in milliseconds, and a job's end (the worker's slot, the abort route's answer) is not held
 * longer than a reconnect's pause for a notice that is queued anyway once Redis answers.
 */
const ADD_WAIT_MS = 2_000;

/**
 * Tells merchants' webhooks that their jobs finished (used by the workers, and by the API when an abort
 * takes a queued job out of its queue). Most merchants have no webhook and a busy worker
 * finishes many jobs a second, so what each merchant subscribes to (or that it has no webhook) is
 * cached for MERCHANT_CACHE_TTL_MS, and concurrent lookups for one merchant share one query.
 */
export function createWebhookNotifier(deps: NotifierDeps): WebhookNotifier {
  const subscriptions = new LoadingCache<Subscription>({
    ttlMs: deps.config.MERCHANT_CACHE_TTL_MS,
    maxEntries: 10_000,
    maxBytes: 4 * 1024 * 1024,
    sizeOf: (found, key) =>
      key.length + 64 + (found?.events.length ?? 0) * 32 + (found?.disabledReason?.length ?? 0) * 2,
  });
  function subscription(merchantId: string): Promise<Subscription> {
    return subscriptions.get(merchantId, async () => {
      const webhook = await findWebhookStatus(deps.db, merchantId);
      if (!webhook) return null;
      const disabledReason = webhook.disabledAt ? (webhook.disabledReason ?? 'disabled') : null;
      return { events: webhook.events, disabledReason };
    });
  }

  return {
    async jobFinished({ merchantId, type, status }) {
      try {
        const found = await subscription(merchantId);
        if (!found?.events.includes(type)) return;
        const eventId = webhookEventId(merchantId, status.jobId, type);
        const body = JSON.stringify({ type, timestamp: new Date().toISOString(), data: status });
        const data: WebhookDeliveryJob = {
          eventId,
          merchantId,
          type,
          jobId: status.jobId,
          body,
        };
        if (found.disabledReason !== null) {
          // Not queued: recorded as not sent, so the merchant's log says what it missed and webhooks/recover
          // can send it once the endpoint is set again.
          await recordDroppedEvents(deps.db, [{ ...data, id: eventId, reason: disabledDetail(found.disabledReason) }]);
          deps.metrics.webhookEventsDropped.inc({ reason: 'disabled' });
          return;
        }
        const added = queueWebhookEvent({ ...deps, queue: deps.queue() }, data);
        // The worker's connection waits for Redis to come back rather than fail; the caller is not held
        // that long (the event is still queued once Redis answers).
        const outcome = await withDeadline(added, ADD_WAIT_MS, () => 'late' as const);
        if (outcome === 'late') {
          deps.logger.warn({ merchantId, jobId: status.jobId, type }, 'webhook event not queued yet: Redis is slow');
          added.catch((error: unknown) =>
            deps.logger.error({ err: error, merchantId, jobId: status.jobId, type }, 'could not queue webhook event'),
          );
        }
      } catch (error) {
        deps.logger.error({ err: error, merchantId, jobId: status.jobId, type }, 'could not queue webhook event');
      }
    },
  };
}
