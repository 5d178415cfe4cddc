import { DelayedError, type Job, UnrecoverableError, Worker } from 'bullmq';
import { isTransientDatabaseError } from '../../shared/db/database-errors.js';
import { queueTelemetry } from '../../shared/jobs/queue-telemetry.js';
import { SecretUnreadableError } from '../../shared/secrets/secret-sealer.js';
import { inSpan } from '../../shared/telemetry/trace-context.js';
import {
  WEBHOOK_MAX_ATTEMPTS,
  type WebhookDeliveryJob,
  type WebhookJobName,
  webhookDeliveryJobSchema,
  webhookJobNames,
  webhookMessageId,
  webhookQueueName,
  webhookRetryDelayMs,
  webhookTestEventType,
} from '../../shared/webhooks/webhook-catalogue.js';
import { recordSentAttempt } from '../../shared/webhooks/webhook-delivery-log.repository.js';
import { assertWebhookEventCatalogueComplete } from '../../shared/webhooks/webhook-events.js';
import { disabledDetail } from '../../shared/webhooks/webhook-notifier.js';
import { dropEvents, finishPending, type PendingDeps, takeAllPending } from '../../shared/webhooks/webhook-pending.js';
import { signWebhook } from '../../shared/webhooks/webhook-signature.js';
import {
  type DeliveryAttempt,
  findDeliveryState,
  findWebhook,
  recordDeliveryAttempt,
  recordEndpointDelivered,
  recordEndpointFailure,
  recordWebhookEvent,
} from '../../shared/webhooks/webhooks.repository.js';
import { outageDelayMs } from '../jobs/job-failures.js';
import type { WorkerDeps } from '../worker-context.js';
import { processWebhookRecover } from './webhook-recover.processor.js';
import { sendWebhook } from './webhook-sender.js';
import { busyDelayMs, createMerchantSlots, type MerchantSlots } from './webhook-slots.js';

export interface WebhookDeliveryWorker {
  worker: Worker;
  close(): Promise<void>;
}

/**
 * Delivers webhooks from their own queue, in every worker process. Each attempt reads the merchant's
 * webhook as it is now (a changed URL or secret applies to retries, a removed or disabled webhook ends
 * them), takes one of its merchant's slots (webhook-slots.ts: when all are held it goes back to the
 * queue for a moment without using an attempt), signs the stored body afresh with a new
 * `webhook-timestamp`, and records its outcome on the delivery row. Every attempt's outcome also tells
 * the endpoint's record (webhooks.repository.ts): failing since when, disabled once every attempt has
 * failed for WEBHOOK_DISABLE_AFTER_MS. A final outcome takes the event out of its merchant's pending set
 * (webhook-pending.ts).
 */
export function startWebhookDeliveryWorker(deps: WorkerDeps): WebhookDeliveryWorker {
  const delivery: Delivery = {
    deps,
    pending: {
      db: deps.db,
      logger: deps.logger,
      metrics: deps.metrics,
      redis: deps.redis,
      shards: deps.shards,
      queue: deps.queues.webhooks,
    },
    slots: createMerchantSlots(deps.redis, deps.shards, {
      limit: deps.config.WEBHOOK_MERCHANT_CONCURRENCY,
      attemptTimeoutMs: deps.config.WEBHOOK_TIMEOUT_MS,
    }),
  };
  const processors: Record<WebhookJobName, (job: Job, token?: string) => Promise<unknown>> = {
    webhookDelivery: (job, token) => {
      const data = job.data as Partial<WebhookDeliveryJob>;
      // An attempt is a span in the trace of the job it tells about (the request's trace): a child of
      // BullMQ's span of the run, itself a child of the span that queued the event (queue-telemetry.ts).
      const attributes = {
        'job.id': data.jobId ?? '',
        'merchant.id': data.merchantId ?? '',
        'webhook.event_id': job.id ?? '',
        'webhook.event_type': data.type ?? '',
        'webhook.attempt': job.attemptsMade + 1,
      };
      const notFailures = (error: unknown) => error instanceof DelayedError;
      return inSpan('webhook delivery', { attributes, notFailures }, async (span) => {
        const started = performance.now();
        const seconds = () => (performance.now() - started) / 1000;
        try {
          const outcome = await deliver(delivery, job, token);
          span.setAttribute('webhook.outcome', outcome);
          const label = outcome === 'delivered' ? 'delivered' : 'dropped';
          deps.metrics.webhookAttemptDuration.observe({ outcome: label }, seconds());
          return outcome;
        } catch (error) {
          // Turned away for a slot or an outage (put back, no attempt used): not an attempt.
          if (!(error instanceof DelayedError))
            deps.metrics.webhookAttemptDuration.observe({ outcome: 'error' }, seconds());
          throw error;
        }
      });
    },
    webhookRecover: (job, token) => processWebhookRecover({ ...delivery.pending, config: deps.config }, job, token),
  };
  // As for the cancellation catalogue: start-up refuses a job kind without a processor, and an event
  // type without its payload and example.
  const missing = webhookJobNames.filter((name) => typeof processors[name] !== 'function');
  if (missing.length > 0) throw new Error(`no processor for webhook job kinds: ${missing.join(', ')}`);
  assertWebhookEventCatalogueComplete();

  for (const outcome of ['delivered', 'retried', 'failed']) deps.metrics.webhookDeliveries.inc({ outcome }, 0);
  for (const reason of ['pending_cap', 'disabled']) deps.metrics.webhookEventsDropped.inc({ reason }, 0);

  const scale = deps.config.WEBHOOK_RETRY_SCALE;
  const worker = new Worker(
    webhookQueueName,
    async (job, token) => {
      const processor = processors[job.name as WebhookJobName];
      if (!processor) throw new UnrecoverableError(`unknown webhook job kind "${job.name}"`);
      return processor(job, token);
    },
    {
      connection: deps.redis,
      prefix: deps.config.QUEUE_PREFIX,
      concurrency: deps.config.WEBHOOK_DELIVERY_CONCURRENCY,
      lockDuration: deps.config.WORKER_LOCK_DURATION_MS,
      stalledInterval: deps.config.WORKER_STALLED_INTERVAL_MS,
      telemetry: queueTelemetry(),
      settings: { backoffStrategy: (failedAttempts: number) => webhookRetryDelayMs(failedAttempts, scale) },
    },
  );
  worker.on('error', (error) => deps.logger.error({ err: error }, 'webhook worker error'));
  // A job that ended for good on an error no outcome above handled (a database refusal, say) leaves its
  // merchant's pending set too, so it no longer counts against the cap.
  worker.on('failed', (job, error) => {
    if (!job) return;
    const final = error instanceof UnrecoverableError || job.attemptsMade >= (job.opts.attempts ?? 1);
    const merchantId = (job.data as Partial<WebhookDeliveryJob>).merchantId;
    if (final && merchantId && job.name === 'webhookDelivery')
      void finishPending(delivery.pending, merchantId, job.id ?? '').catch(() => {});
  });

  return {
    worker,
    async close() {
      await worker.close();
    },
  };
}

interface Delivery {
  deps: WorkerDeps;
  pending: PendingDeps;
  slots: MerchantSlots;
}

/**
 * Takes one of the merchant's slots before anything else, so that an attempt turned away costs Redis
 * only (a merchant with many events waiting must not load Postgres with them); the slot is freed however
 * the attempt ends.
 */
async function deliver(delivery: Delivery, job: Job, token: string | undefined): Promise<string> {
  const event = webhookDeliveryJobSchema.parse(job.data);
  await takeSlotOrWait(delivery, job, token, event);
  try {
    return await attempt(delivery, job, token, event);
  } finally {
    await delivery.slots.release(event.merchantId, event.eventId).catch(() => {});
  }
}

/** One of the merchant's slots (taken, or refreshed when held), or back to the queue for a moment without using an attempt. */
async function takeSlotOrWait(
  { deps, slots }: Delivery,
  job: Job,
  token: string | undefined,
  event: WebhookDeliveryJob,
): Promise<void> {
  if (await slots.take(event.merchantId, event.eventId)) return;
  if (!token) throw new Error('webhook slots held, and no token to put the job back');
  const turnedAway = job.attemptsStarted - job.attemptsMade;
  await job.moveToDelayed(Date.now() + busyDelayMs(turnedAway, deps.config.WEBHOOK_TIMEOUT_MS), token);
  throw new DelayedError("merchant's webhook slots are all held: delivery put back without using an attempt");
}

async function attempt(
  delivery: Delivery,
  job: Job,
  token: string | undefined,
  event: WebhookDeliveryJob,
): Promise<string> {
  const { deps, pending } = delivery;
  let webhook: Awaited<ReturnType<typeof findWebhook>>;
  try {
    await recordWebhookEvent(deps.db, { ...event, id: event.eventId });
    const state = await findDeliveryState(deps.db, event.eventId);
    // Already delivered, given up or dropped (the same event queued again once its first job had left
    // Redis, or dropped while this job waited).
    if (state !== 'pending') {
      await finishPending(pending, event.merchantId, event.eventId);
      return `already ${state}`;
    }
    webhook = await findWebhook(deps.db, deps.secrets, event.merchantId);
  } catch (error) {
    if (isTransientDatabaseError(error) && token) {
      // Postgres away: the delivery goes back to the queue without using one of its attempts.
      await job.moveToDelayed(Date.now() + outageDelayMs(), token);
      throw new DelayedError('database unavailable: delivery put back without using an attempt');
    }
    // The webhook secret does not open (a key missing from SECRETS_KEYS): a configuration error, said
    // loudly; the attempt fails and is retried on the usual schedule, so deliveries resume once it is fixed.
    if (error instanceof SecretUnreadableError) {
      deps.logger.error(
        { err: error, eventId: event.eventId, merchantId: event.merchantId },
        'webhook secret unreadable',
      );
    }
    throw error;
  }

  // The row counts every attempt of the event, those of a job that sent it before included.
  const attemptNumber = (event.priorAttempts ?? 0) + job.attemptsMade + 1;
  const lastOfThisJob = job.attemptsMade + 1 >= (job.opts.attempts ?? WEBHOOK_MAX_ATTEMPTS);
  const subscribed = event.type === webhookTestEventType || webhook?.events.includes(event.type);
  if (!webhook || !subscribed) {
    const reason = webhook ? `event type ${event.type} no longer subscribed` : 'webhook removed';
    await finish(deps, pending, event, { ...emptyAttempt(attemptNumber - 1), state: 'failed', lastError: reason });
    throw new UnrecoverableError(reason);
  }
  if (webhook.disabledAt) {
    await dropOne(deps, pending, event, disabledDetail(webhook.disabledReason ?? 'disabled'), {
      attempts: attemptNumber - 1,
      lastStatus: null,
    });
    return 'dropped: endpoint disabled';
  }

  // The slot again, refreshed: its lifetime counts from here, the send's own bound after the reads above.
  await takeSlotOrWait(delivery, job, token, event);
  const messageId = webhookMessageId(event.eventId);
  const timestamp = Math.floor(Date.now() / 1000);
  // During a rotation's overlap both secrets sign, space-separated as Standard Webhooks allows: a
  // receiver that knows either one verifies the delivery.
  const signature = [webhook.secret, ...(webhook.previousSecret ? [webhook.previousSecret] : [])]
    .map((secret) => signWebhook(secret, messageId, timestamp, event.body))
    .join(' ');
  const sentAt = performance.now();
  const response = await sendWebhook({
    url: webhook.url,
    body: event.body,
    timeoutMs: deps.config.WEBHOOK_TIMEOUT_MS,
    allowPrivate: deps.config.WEBHOOK_ALLOW_PRIVATE,
    headers: {
      'webhook-id': messageId,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signature,
    },
  }).finally(() => delivery.slots.release(event.merchantId, event.eventId).catch(() => {}));
  await recordSentAttempt(deps.db, {
    eventId: event.eventId,
    status: response.outcome === 'answered' ? response.status : null,
    durationMs: performance.now() - sentAt,
    error: response.outcome === 'answered' ? null : response.error,
  });

  const log = {
    eventId: event.eventId,
    merchantId: event.merchantId,
    jobId: event.jobId,
    type: event.type,
    attempt: attemptNumber,
  };
  if (response.outcome === 'answered' && response.status >= 200 && response.status < 300) {
    await finish(deps, pending, event, {
      ...emptyAttempt(attemptNumber),
      state: 'delivered',
      lastStatus: response.status,
      deliveredAt: new Date(),
    });
    await recordEndpointDelivered(deps.db, event.merchantId, webhook.settingsVersion);
    deps.logger.info({ ...log, status: response.status }, 'webhook delivered');
    return 'delivered';
  }

  const lastStatus = response.outcome === 'answered' ? response.status : null;
  const lastError = response.outcome === 'answered' ? `HTTP ${response.status}` : response.error;
  const disabled = await recordEndpointFailure(
    deps.db,
    event.merchantId,
    webhook.settingsVersion,
    deps.config.WEBHOOK_DISABLE_AFTER_MS,
    lastError,
  );
  if (disabled) {
    // Every attempt has failed for WEBHOOK_DISABLE_AFTER_MS: this event and every other pending one of
    // the merchant are given up now, each recorded, rather than left to hold Redis for their retries.
    deps.logger.warn({ ...log, reason: disabled.reason }, 'webhook endpoint disabled');
    const detail = disabledDetail(disabled.reason);
    await dropOne(deps, pending, event, detail, { attempts: attemptNumber, lastStatus });
    const others = await takeAllPending(pending, event.merchantId);
    await dropEvents(
      pending,
      event.merchantId,
      others.filter((id) => id !== event.eventId),
      'disabled',
      detail,
    );
    return 'dropped: endpoint disabled';
  }

  // An internal address found at delivery time is not retried: a name that resolves inside the
  // service's network is a misconfiguration or an attack, and repeating the attempt for hours would
  // give an attacker more tries at a resolver race.
  if (response.outcome === 'refused' || lastOfThisJob) {
    await finish(deps, pending, event, { ...emptyAttempt(attemptNumber), state: 'failed', lastStatus, lastError });
    deps.logger.warn({ ...log, lastStatus, lastError }, 'webhook delivery given up');
    const message = `webhook delivery failed: ${lastError}`;
    throw response.outcome === 'refused' ? new UnrecoverableError(message) : new Error(message);
  }

  const nextAttemptAt = new Date(
    Date.now() + webhookRetryDelayMs(job.attemptsMade + 1, deps.config.WEBHOOK_RETRY_SCALE),
  );
  const recorded = await recordDeliveryAttempt(deps.db, event.eventId, {
    ...emptyAttempt(attemptNumber),
    state: 'pending',
    lastStatus,
    lastError,
    nextAttemptAt,
  });
  if (!recorded) {
    // Dropped while this attempt was in flight (the pending cap): its record says so already.
    await finishPending(pending, event.merchantId, event.eventId);
    return 'dropped during the attempt';
  }
  deps.metrics.webhookDeliveries.inc({ outcome: 'retried' });
  deps.logger.info({ ...log, lastStatus, lastError, nextAttemptAt }, 'webhook attempt failed; will retry');
  throw new Error(`webhook attempt failed: ${lastError}`);
}

function emptyAttempt(attempts: number): DeliveryAttempt {
  return { state: 'pending', attempts, lastStatus: null, lastError: null, nextAttemptAt: null, deliveredAt: null };
}

/** A final outcome: recorded on the row, counted, and out of the merchant's pending set. */
async function finish(
  deps: WorkerDeps,
  pending: PendingDeps,
  event: WebhookDeliveryJob,
  attempt: DeliveryAttempt,
): Promise<void> {
  await recordDeliveryAttempt(deps.db, event.eventId, attempt);
  deps.metrics.webhookDeliveries.inc({ outcome: attempt.state === 'delivered' ? 'delivered' : 'failed' });
  await finishPending(pending, event.merchantId, event.eventId);
}

/**
 * This event given up because its endpoint is disabled: recorded `dropped` (with the attempts it made),
 * counted, and out of the merchant's pending set.
 */
async function dropOne(
  deps: WorkerDeps,
  pending: PendingDeps,
  event: WebhookDeliveryJob,
  detail: string,
  attempt: { attempts: number; lastStatus: number | null },
): Promise<void> {
  await recordDeliveryAttempt(deps.db, event.eventId, {
    ...emptyAttempt(attempt.attempts),
    state: 'dropped',
    lastStatus: attempt.lastStatus,
    lastError: detail,
  });
  deps.metrics.webhookEventsDropped.inc({ reason: 'disabled' });
  await finishPending(pending, event.merchantId, event.eventId);
}
