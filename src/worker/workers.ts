import { DelayedError, type Job, type Processor, UnrecoverableError, Worker } from 'bullmq';
import { isDatabaseUnavailable, isTransientDatabaseError } from '../shared/database-errors.js';
import { type JobName, jobNames, queueNames } from '../shared/queue/job-catalogue.js';
import { DatabaseGate } from './database-gate.js';
import { classifyFailure } from './job-failures.js';
import { abortRequested, finishedJobStatus, forgetIdentifiers, isMerchantJob, recordFailure } from './job-lifecycle.js';
import { createBulkCancelProcessor } from './processors/bulk-cancel.processor.js';
import { createBulkCancelByQueryProcessor } from './processors/bulk-cancel-by-query.processor.js';
import { createBulkCancelPartProcessor } from './processors/bulk-cancel-part.processor.js';
import { createCancelBatchProcessor } from './single-cancels/cancel-batch.processor.js';
import { createSingleCancelCoalescer } from './single-cancels/single-cancel-coalescer.js';
import { startWebhookDeliveryWorker } from './webhooks/webhook-delivery.worker.js';
import type { WorkerDeps } from './worker-context.js';

type JobProcessor = (job: Job, token?: string) => Promise<unknown>;

export interface CancellationWorkers {
  workers: Worker[];
  /** Stops taking jobs, lets active ones finish (or hand themselves back), then closes. */
  close(): Promise<void>;
}

/**
 * How often a dead worker's job may be taken over before BullMQ fails it as "stalled". Every Redis
 * restart and every killed worker counts once; a job must survive many of those, because failing it
 * would break the promise that an accepted cancel is applied.
 */
const MAX_STALLED_COUNT = 20;

/** A job put back because Postgres is away runs again after 1–2 s (the gate holds it while paused). */
function outageDelayMs(): number {
  return 1_000 + Math.floor(Math.random() * 1_000);
}

/**
 * The BullMQ workers of one worker process: one on the single-cancel queue (high concurrency, its
 * jobs coalesced) and one on the bulk queue (low concurrency: each job is database-bound).
 */
export function startWorkers(deps: WorkerDeps): CancellationWorkers {
  const coalescer = createSingleCancelCoalescer(deps);
  const processors: Record<JobName, JobProcessor> = {
    cancelBatch: createCancelBatchProcessor(deps, coalescer),
    bulkCancel: createBulkCancelProcessor(deps),
    bulkCancelByQuery: createBulkCancelByQueryProcessor(deps),
    bulkCancelPart: createBulkCancelPartProcessor(deps),
  };
  // Start-up refuses a catalogue entry without a processor (one job catalogue).
  const missing = jobNames.filter((name) => typeof processors[name] !== 'function');
  if (missing.length > 0) throw new Error(`no processor for job kinds: ${missing.join(', ')}`);

  const gate = new DatabaseGate(deps.db, deps.logger);
  gate.onResume(() => void deps.outbox.flush());

  const dispatch: Processor = async (job, token) => {
    const processor = processors[job.name as JobName];
    if (!processor) throw new UnrecoverableError(`unknown job kind "${job.name}"`);
    const merchantId = (job.data as { merchantId?: string }).merchantId;
    if (job.queueName === queueNames.bulk && merchantId) await deps.turns.started(merchantId, job.id as string);
    try {
      return await processor(job, token);
    } catch (error) {
      if (isTransientDatabaseError(error) && token) {
        // Postgres away (or a deadlock): the job goes back to the queue without using an attempt,
        // so no outage, however long, can make an accepted cancel fail.
        if (isDatabaseUnavailable(error)) gate.reportUnavailable(error);
        await job.moveToDelayed(Date.now() + outageDelayMs(), token);
        throw new DelayedError('database unavailable: job put back without using an attempt');
      }
      throw classifyFailure(error);
    }
  };

  const common = {
    connection: deps.redis,
    prefix: deps.config.QUEUE_PREFIX,
    autorun: true,
    lockDuration: deps.config.WORKER_LOCK_DURATION_MS,
    stalledInterval: deps.config.WORKER_STALLED_INTERVAL_MS,
    maxStalledCount: MAX_STALLED_COUNT,
  };
  const workers = [
    new Worker(queueNames.single, dispatch, { ...common, concurrency: deps.config.WORKER_CANCEL_CONCURRENCY }),
    new Worker(queueNames.bulk, dispatch, { ...common, concurrency: deps.config.WORKER_BULK_CONCURRENCY }),
  ];
  gate.watch(workers);
  for (const worker of workers) observe(deps, worker);
  deps.outbox.start();
  const webhookDelivery = startWebhookDeliveryWorker(deps);

  return {
    workers,
    async close() {
      gate.close();
      deps.outbox.stop();
      // Pause first so no new job is taken while the coalescer settles the jobs it holds.
      await Promise.all(workers.map((worker) => worker.pause(true)));
      await coalescer.drain();
      // The webhooks queue stays open (closed with the other queues after this): jobs that finished while
      // draining still tell their merchants' webhooks.
      await Promise.all([...workers.map((worker) => worker.close()), webhookDelivery.close()]);
    },
  };
}

/** Tells the merchant's webhook that a job of theirs completed, or stopped after an abort. */
async function notifyFinished(deps: WorkerDeps, job: Job, merchantId: string, result: unknown): Promise<void> {
  const aborted =
    job.queueName === queueNames.bulk && (await abortRequested(deps, job.id as string).catch(() => false));
  if (job.queueName === queueNames.bulk) {
    const seconds = ((job.finishedOn ?? Date.now()) - (job.processedOn ?? job.timestamp)) / 1000;
    deps.metrics.jobDuration.observe({ operation: job.name, outcome: aborted ? 'cancelled' : 'completed' }, seconds);
  }
  await deps.webhooks.jobFinished({
    merchantId,
    type: aborted ? 'job.cancelled' : 'job.completed',
    status: finishedJobStatus(job, aborted ? 'cancelled' : 'completed', result as Record<string, number>),
  });
}

/** One log line, metrics, the merchant's bookkeeping and (on final failure) the audit row per job. */
function observe(deps: WorkerDeps, worker: Worker): void {
  worker.on('completed', (job, result) => {
    const ms = (job.finishedOn ?? Date.now()) - (job.processedOn ?? job.timestamp);
    // A merchant's bulk job is counted once it is known whether it ran to the end or was aborted.
    if (job.queueName !== queueNames.bulk || !isMerchantJob(job)) {
      deps.metrics.jobDuration.observe({ operation: job.name, outcome: 'completed' }, ms / 1000);
    }
    const data = job.data as { merchantId?: string; requestId?: string };
    const log = isMerchantJob(job) ? deps.logger.info.bind(deps.logger) : deps.logger.debug.bind(deps.logger);
    log(
      {
        jobId: job.id,
        merchantId: data.merchantId,
        requestId: data.requestId,
        operation: job.name,
        counts: result,
        ms,
      },
      'job completed',
    );
    if (isMerchantJob(job) && data.merchantId) void notifyFinished(deps, job, data.merchantId, result);
    // A batch of single cancels drops its requests (each one's outcome is in its own audit row).
    if (job.name === 'cancelBatch') void forgetIdentifiers(job);
    if (job.queueName !== queueNames.bulk) return;
    if (data.merchantId) void deps.turns.finished(data.merchantId, job.id as string).catch(() => {});
    void forgetIdentifiers(job);
  });

  worker.on('failed', (job, error) => {
    if (!job) return;
    void recordFailure(deps, job, error);
  });

  worker.on('error', (error) => {
    deps.logger.error({ err: error }, 'worker error');
  });
}
