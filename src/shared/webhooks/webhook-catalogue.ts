import { createHash } from 'node:crypto';
import type { DefaultJobOptions } from 'bullmq';
import { z } from 'zod';
import { uuidSchema } from '../wire-rules.js';

/**
 * The catalogue of webhook deliveries: a queue of its own (a slow or failing receiver must never hold
 * up cancellations), its one job kind, the payload schema, the retry schedule and the event ids.
 * Kept apart from the cancellation catalogue, whose kinds all share the cancellation queues and
 * their bookkeeping (merchant turns, the audit table).
 */

export const webhookQueueName = 'webhooks';

/** The events a webhook subscribes to (its `events`): a job's end. */
export const webhookEventTypes = ['job.completed', 'job.failed', 'job.cancelled'] as const;
export type WebhookEventType = (typeof webhookEventTypes)[number];

/** Sent only when the merchant asks for it (webhooks/test), whatever its webhook subscribes to. */
export const webhookTestEventType = 'webhook.test' as const;

/** Every event type a delivery may carry; each has its payload and example in webhook-events.ts. */
export const allWebhookEventTypes = [...webhookEventTypes, webhookTestEventType] as const;
export type AnyWebhookEventType = (typeof allWebhookEventTypes)[number];

export const webhookDeliveryJobSchema = z.object({
  /** The event's id: the delivery row's id and, as `msg_<id>`, the `webhook-id` of every attempt. */
  eventId: uuidSchema(),
  merchantId: uuidSchema(),
  type: z.enum(allWebhookEventTypes),
  /** The merchant's job the event is about; empty for a test event. */
  jobId: z.string().max(128),
  /** The exact body of every attempt, serialised once so that each retry sends the same bytes. */
  body: z.string().min(1),
  /**
   * Attempts the event had before this job (sent again by webhooks/redeliver or webhooks/recover): the
   * delivery row counts every attempt, while this job's retries count only its own.
   */
  priorAttempts: z.number().int().min(0).optional(),
});
export type WebhookDeliveryJob = z.infer<typeof webhookDeliveryJobSchema>;

/**
 * A merchant's recovery (webhooks/recover): its events not delivered between `since` and `until`, sent
 * again a batch at a time as the merchant's pending set has room, from `after` on (the cursor the job
 * keeps with updateData, so a retried job resumes).
 */
export const webhookRecoverJobSchema = z.object({
  merchantId: uuidSchema(),
  /** Epoch ms. */
  since: z.number().int().min(0),
  until: z.number().int().min(0),
  /** The last event queued so far: its `created_at` as Postgres prints it (to the microsecond) and its id. */
  after: z.object({ createdAt: z.string(), id: uuidSchema() }).optional(),
  /** Events queued so far. */
  queued: z.number().int().min(0).default(0),
});

/** One recovery per merchant at a time: its job id (no `:`). */
export function webhookRecoverJobId(merchantId: string): string {
  return `recover-${merchantId.toLowerCase()}`;
}

const webhookJobCatalogue = {
  webhookDelivery: { queue: webhookQueueName, schema: webhookDeliveryJobSchema },
  webhookRecover: { queue: webhookQueueName, schema: webhookRecoverJobSchema },
} as const;
export type WebhookJobName = keyof typeof webhookJobCatalogue;
export const webhookJobNames = Object.keys(webhookJobCatalogue) as WebhookJobName[];

/**
 * Waits after each failed attempt: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h (the schedule Standard Webhooks
 * suggests, cut after 10 h); the seventh failure gives up, about 17.5 hours after the first attempt.
 */
const RETRY_DELAYS_MS = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000] as const;
export const WEBHOOK_MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;

/** The name BullMQ knows the schedule by (job option `backoff.type`, worker `settings.backoffStrategy`). */
const WEBHOOK_BACKOFF_TYPE = 'webhook-schedule';

/**
 * The wait after failed attempt number `failedAttempts` (1 for the first), multiplied by `scale`
 * (WEBHOOK_RETRY_SCALE: 1 in production).
 */
export function webhookRetryDelayMs(failedAttempts: number, scale: number): number {
  const index = Math.min(Math.max(failedAttempts, 1), RETRY_DELAYS_MS.length) - 1;
  return Math.round((RETRY_DELAYS_MS[index] as number) * scale);
}

/**
 * One id per (merchant, job, event type), derived rather than random: a job that reports the same
 * outcome twice (a retried hand-off, two replicas racing) makes one event, one delivery row and one
 * queued job, so its merchant is told once. Formatted as a UUID (version 8: custom).
 */
export function webhookEventId(merchantId: string, jobId: string, type: WebhookEventType): string {
  const bytes = createHash('sha256').update(`${merchantId}\0${jobId}\0${type}`).digest().subarray(0, 16);
  bytes[6] = ((bytes[6] as number) & 0x0f) | 0x80;
  bytes[8] = ((bytes[8] as number) & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The `webhook-id` header: the event id with the customary prefix. */
export function webhookMessageId(eventId: string): string {
  return `msg_${eventId}`;
}

const DAY_SECONDS = 24 * 60 * 60;

export const webhookJobOptions: DefaultJobOptions = {
  attempts: WEBHOOK_MAX_ATTEMPTS,
  backoff: { type: WEBHOOK_BACKOFF_TYPE },
  // The delivery rows in Postgres are the record; Redis keeps finished jobs only for the dashboard.
  removeOnComplete: { age: DAY_SECONDS, count: 10_000 },
  removeOnFail: { age: 7 * DAY_SECONDS, count: 10_000 },
};
