import { DelayedError, type Job, UnrecoverableError, Worker } from 'bullmq';
import { isTransientDatabaseError } from '../../shared/database-errors.js';
import { SecretUnreadableError } from '../../shared/secrets/secret-sealer.js';
import {
  WEBHOOK_MAX_ATTEMPTS,
  type WebhookDeliveryJob,
  type WebhookJobName,
  webhookDeliveryJobSchema,
  webhookJobNames,
  webhookMessageId,
  webhookQueueName,
  webhookRetryDelayMs,
} from '../../shared/webhooks/webhook-catalogue.js';
import { signWebhook } from '../../shared/webhooks/webhook-signature.js';
import {
  type DeliveryAttempt,
  findDeliveryState,
  findWebhook,
  recordDeliveryAttempt,
  recordWebhookEvent,
} from '../../shared/webhooks/webhooks.repository.js';
import { outageDelayMs } from '../job-failures.js';
import type { WorkerDeps } from '../worker-context.js';
import { sendWebhook } from './webhook-sender.js';

export interface WebhookDeliveryWorker {
  worker: Worker;
  close(): Promise<void>;
}

/**
 * Delivers webhooks from their own queue, in every worker process. Each attempt reads the merchant's
 * webhook as it is now (a changed URL or secret applies to retries, a removed webhook ends them), signs
 * the stored body afresh with a new `webhook-timestamp`, and records its outcome on the delivery row.
 */
export function startWebhookDeliveryWorker(deps: WorkerDeps): WebhookDeliveryWorker {
  const processors: Record<WebhookJobName, (job: Job, token?: string) => Promise<unknown>> = {
    webhookDelivery: (job, token) => deliver(deps, job, token),
  };
  // As for the cancellation catalogue: start-up refuses a job kind without a processor.
  const missing = webhookJobNames.filter((name) => typeof processors[name] !== 'function');
  if (missing.length > 0) throw new Error(`no processor for webhook job kinds: ${missing.join(', ')}`);

  for (const outcome of ['delivered', 'retried', 'failed']) deps.metrics.webhookDeliveries.inc({ outcome }, 0);

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
      settings: { backoffStrategy: (failedAttempts: number) => webhookRetryDelayMs(failedAttempts, scale) },
    },
  );
  worker.on('error', (error) => deps.logger.error({ err: error }, 'webhook worker error'));

  return {
    worker,
    async close() {
      await worker.close();
    },
  };
}

async function deliver(deps: WorkerDeps, job: Job, token: string | undefined): Promise<string> {
  const event = webhookDeliveryJobSchema.parse(job.data);
  let webhook: Awaited<ReturnType<typeof findWebhook>>;
  try {
    await recordWebhookEvent(deps.db, { ...event, id: event.eventId });
    const state = await findDeliveryState(deps.db, event.eventId);
    // Already delivered or given up (the same event queued again once its first job had left Redis).
    if (state !== 'pending') return `already ${state}`;
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

  const attempt = job.attemptsMade + 1;
  if (!webhook?.events.includes(event.type)) {
    const reason = webhook ? `event type ${event.type} no longer subscribed` : 'webhook removed';
    await finish(deps, event, { ...emptyAttempt(attempt - 1), state: 'failed', lastError: reason });
    throw new UnrecoverableError(reason);
  }

  const messageId = webhookMessageId(event.eventId);
  const timestamp = Math.floor(Date.now() / 1000);
  const response = await sendWebhook({
    url: webhook.url,
    body: event.body,
    timeoutMs: deps.config.WEBHOOK_TIMEOUT_MS,
    allowPrivate: deps.config.WEBHOOK_ALLOW_PRIVATE,
    headers: {
      'webhook-id': messageId,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signWebhook(webhook.secret, messageId, timestamp, event.body),
    },
  });

  const log = { eventId: event.eventId, merchantId: event.merchantId, jobId: event.jobId, type: event.type, attempt };
  if (response.outcome === 'answered' && response.status >= 200 && response.status < 300) {
    await finish(deps, event, {
      ...emptyAttempt(attempt),
      state: 'delivered',
      lastStatus: response.status,
      deliveredAt: new Date(),
    });
    deps.logger.info({ ...log, status: response.status }, 'webhook delivered');
    return 'delivered';
  }

  const lastStatus = response.outcome === 'answered' ? response.status : null;
  const lastError = response.outcome === 'answered' ? `HTTP ${response.status}` : response.error;
  // An internal address found at delivery time is not retried: a name that resolves inside the
  // service's network is a misconfiguration or an attack, and repeating the attempt for hours would
  // give an attacker more tries at a resolver race.
  if (response.outcome === 'refused' || attempt >= WEBHOOK_MAX_ATTEMPTS) {
    await finish(deps, event, { ...emptyAttempt(attempt), state: 'failed', lastStatus, lastError });
    deps.logger.warn({ ...log, lastStatus, lastError }, 'webhook delivery given up');
    const message = `webhook delivery failed: ${lastError}`;
    throw response.outcome === 'refused' ? new UnrecoverableError(message) : new Error(message);
  }

  const nextAttemptAt = new Date(Date.now() + webhookRetryDelayMs(attempt, deps.config.WEBHOOK_RETRY_SCALE));
  await recordDeliveryAttempt(deps.db, event.eventId, {
    ...emptyAttempt(attempt),
    state: 'pending',
    lastStatus,
    lastError,
    nextAttemptAt,
  });
  deps.metrics.webhookDeliveries.inc({ outcome: 'retried' });
  deps.logger.info({ ...log, lastStatus, lastError, nextAttemptAt }, 'webhook attempt failed; will retry');
  throw new Error(`webhook attempt failed: ${lastError}`);
}

function emptyAttempt(attempts: number): DeliveryAttempt {
  return { state: 'pending', attempts, lastStatus: null, lastError: null, nextAttemptAt: null, deliveredAt: null };
}

/** A final outcome: recorded on the row and counted. */
async function finish(deps: WorkerDeps, event: WebhookDeliveryJob, attempt: DeliveryAttempt): Promise<void> {
  await recordDeliveryAttempt(deps.db, event.eventId, attempt);
  deps.metrics.webhookDeliveries.inc({ outcome: attempt.state === 'delivered' ? 'delivered' : 'failed' });
}
