import { DelayedError, type Job, type Processor, UnrecoverableError, Worker } from 'bullmq';
import { isDatabaseUnavailable, isTransientDatabaseError } from '../shared/db/database-errors.js';
import { type JobName, jobNames } from '../shared/jobs/job-catalogue.js';
import { queueTelemetry } from '../shared/jobs/queue-telemetry.js';
import { type QueueName, queueNames } from '../shared/redis/redis-keys.js';
import { createBulkCancelProcessor } from './cancellations/bulk-cancel.processor.js';
import { createBulkCancelByQueryProcessor } from './cancellations/bulk-cancel-by-query.processor.js';
import { createBulkCancelPartProcessor } from './cancellations/bulk-cancel-part.processor.js';
import { createCancelBatchProcessor } from './cancellations/single-cancels/cancel-batch.processor.js';
import { createSingleCancelCoalescer } from './cancellations/single-cancels/single-cancel-coalescer.js';
import { DatabaseGate } from './database-gate.js';
import { JobEnds } from './jobs/job-end/job-ends.js';
import { classifyFailure, outageDelayMs } from './jobs/job-failures.js';
import { traceJob } from './jobs/job-spans.js';
import { ShardSlots } from './jobs/shard-slots.js';
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

/**
 * The BullMQ workers of one worker process: for each queue shard it consumes (every shard, or those
 * WORKER_SHARDS names; shards.ts), one on the single-cancel queue (high concurrency, its jobs coalesced)
 * and one on the bulk queue (low concurrency: each job is database-bound). With several shards the
 * concurrency of each kind is the process's, shared by its shards in turn (shard-slots.ts).
 */
export function startWorkers(deps: WorkerDeps): CancellationWorkers {
  const coalescer = createSingleCancelCoalescer(deps);
  // Every processor ends through the one job end (job-end/job-ends.ts): its outcome decided once.
  // With tracing on, BullMQ runs each attempt of a job in a span of the request's trace (queue-telemetry.ts).
  const telemetry = queueTelemetry();
  const ends = new JobEnds(deps, telemetry);
  const processors: Record<JobName, JobProcessor> = {
    cancelBatch: ends.wrap(createCancelBatchProcessor(deps, coalescer)),
    bulkCancel: ends.wrap(createBulkCancelProcessor(deps)),
    bulkCancelByQuery: ends.wrap(createBulkCancelByQueryProcessor(deps)),
    bulkCancelPart: ends.wrap(createBulkCancelPartProcessor(deps)),
  };
  // Start-up refuses a catalogue entry without a processor (one job catalogue).
  const missing = jobNames.filter((name) => typeof processors[name] !== 'function');
  if (missing.length > 0) throw new Error(`no processor for job kinds: ${missing.join(', ')}`);

  const gate = new DatabaseGate(deps.db, deps.logger, {
    intervalMs: deps.config.DB_PROBE_INTERVAL_MS,
    timeoutMs: deps.config.DB_PROBE_TIMEOUT_MS,
  });
  gate.onResume(() => void deps.outbox.flush());

  const dispatch: Processor = async (job, token) => {
    const processor = processors[job.name as JobName];
    if (!processor) throw new UnrecoverableError(`unknown job kind "${job.name}"`);
    try {
      return await processor(job, token);
    } catch (error) {
      if (isTransientDatabaseError(error) && token) {
        // Postgres away, a deadlock, or a lock not granted within WORKER_LOCK_TIMEOUT_MS: the job goes
        // back to the queue without using an attempt, so no outage, however long, can make an accepted
        // cancel fail.
        if (isDatabaseUnavailable(error)) gate.reportUnavailable(error);
        await job.moveToDelayed(Date.now() + outageDelayMs(), token);
        throw new DelayedError('database unavailable: job put back without using an attempt');
      }
      throw classifyFailure(error);
    }
  };

  // job-spans.ts describes the span BullMQ runs an attempt in; tracing off, no wrapper.
  const run: Processor = telemetry ? (job, token) => traceJob(job, () => dispatch(job, token)) : dispatch;
  const common = {
    connection: deps.redis,
    telemetry,
    autorun: true,
    lockDuration: deps.config.WORKER_LOCK_DURATION_MS,
    stalledInterval: deps.config.WORKER_STALLED_INTERVAL_MS,
    maxStalledCount: MAX_STALLED_COUNT,
  };
  const concurrency: Record<QueueName, number> = {
    [queueNames.single]: deps.config.WORKER_CANCEL_CONCURRENCY,
    [queueNames.bulk]: deps.config.WORKER_BULK_CONCURRENCY,
  };
  const shards = deps.shards.consumedShards();
  const workers: Worker[] = [];
  for (const queueName of [queueNames.single, queueNames.bulk]) {
    // One shard (the unsharded layout): BullMQ's own concurrency is the cap, nothing shared.
    const slots = shards.length > 1 ? new ShardSlots(concurrency[queueName]) : undefined;
    for (const shard of shards) {
      const prefix = deps.shards.shardPrefix(shard);
      const processor: Processor = slots ? (job, token) => slots.run(prefix, () => run(job, token)) : run;
      workers.push(new Worker(queueName, processor, { ...common, prefix, concurrency: concurrency[queueName] }));
    }
  }
  gate.watch(workers);
  for (const worker of workers) {
    ends.observe(worker);
    worker.on('error', (error) => deps.logger.error({ err: error }, 'worker error'));
  }
  deps.outbox.start();
  ends.start();
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
      await ends.close();
    },
  };
}
