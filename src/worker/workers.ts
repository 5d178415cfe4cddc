import { type Job, type Processor, UnrecoverableError, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { type JobName, jobCatalogue, jobNames, queueNames } from '../shared/queue/job-catalogue.js';
import { recordJobsFinished } from '../shared/repositories/cancellation-jobs.repository.js';
import { classifyFailure } from './job-failures.js';
import { createBulkCancelProcessor } from './processors/bulk-cancel.processor.js';
import { createBulkCancelByQueryProcessor } from './processors/bulk-cancel-by-query.processor.js';
import { createBulkCancelPartProcessor } from './processors/bulk-cancel-part.processor.js';
import { createCancelProcessor, createSingleCancelCoalescer } from './processors/cancel.processor.js';
import type { WorkerDeps } from './worker-context.js';

type JobProcessor = (job: Job, token?: string) => Promise<unknown>;

export interface CancellationWorkers {
  workers: Worker[];
  /** Stops taking jobs, lets active ones finish (or hand themselves back), then closes. */
  close(): Promise<void>;
}

/**
 * The BullMQ workers of one worker process: one on the single-cancel queue (high concurrency, its
 * jobs coalesced) and one on the bulk queue (low concurrency: each job is database-bound).
 */
export function startWorkers(deps: WorkerDeps, connection: Redis): CancellationWorkers {
  const coalescer = createSingleCancelCoalescer(deps);
  const processors: Record<JobName, JobProcessor> = {
    cancel: createCancelProcessor(coalescer),
    bulkCancel: createBulkCancelProcessor(deps),
    bulkCancelByQuery: createBulkCancelByQueryProcessor(deps),
    bulkCancelPart: createBulkCancelPartProcessor(deps),
  };
  // Start-up refuses a catalogue entry without a processor (STYLE: one job catalogue).
  const missing = jobNames.filter((name) => typeof processors[name] !== 'function');
  if (missing.length > 0) throw new Error(`no processor for job kinds: ${missing.join(', ')}`);

  const dispatch: Processor = async (job, token) => {
    const processor = processors[job.name as JobName];
    if (!processor) throw new UnrecoverableError(`unknown job kind "${job.name}"`);
    try {
      return await processor(job, token);
    } catch (error) {
      throw classifyFailure(error);
    }
  };

  const common = {
    connection,
    prefix: deps.config.QUEUE_PREFIX,
    autorun: true,
    lockDuration: deps.config.WORKER_LOCK_DURATION_MS,
    // Jobs of a dead worker are looked for as often as its locks can expire.
    stalledInterval: deps.config.WORKER_LOCK_DURATION_MS,
  };
  const workers = [
    new Worker(queueNames.single, dispatch, { ...common, concurrency: deps.config.WORKER_CANCEL_CONCURRENCY }),
    new Worker(queueNames.bulk, dispatch, { ...common, concurrency: deps.config.WORKER_BULK_CONCURRENCY }),
  ];
  for (const worker of workers) observe(deps, worker);

  return {
    workers,
    async close() {
      // Pause first so no new job is taken while the coalescer settles the jobs it holds.
      await Promise.all(workers.map((worker) => worker.pause(true)));
      await coalescer.drain();
      await Promise.all(workers.map((worker) => worker.close()));
    },
  };
}

function isMerchantJob(job: Job): boolean {
  return job.name !== 'bulkCancelPart';
}

/** One log line, metrics and (on final failure) the audit row per job. */
function observe(deps: WorkerDeps, worker: Worker): void {
  worker.on('completed', (job, result) => {
    const ms = (job.finishedOn ?? Date.now()) - (job.processedOn ?? job.timestamp);
    deps.metrics.jobDuration.observe({ operation: job.name, outcome: 'completed' }, ms / 1000);
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
  });

  worker.on('failed', (job, error) => {
    if (!job) return;
    void recordFinalFailure(deps, job, error);
  });

  worker.on('error', (error) => {
    deps.logger.error({ err: error }, 'worker error');
  });
}

async function recordFinalFailure(deps: WorkerDeps, job: Job, error: Error): Promise<void> {
  const data = job.data as { merchantId?: string; requestId?: string; rootJobId?: string };
  const final = (await job.getState().catch(() => 'unknown')) === 'failed';
  const ms = Date.now() - (job.processedOn ?? job.timestamp);
  deps.logger[final ? 'error' : 'warn'](
    {
      jobId: job.id,
      merchantId: data.merchantId,
      requestId: data.requestId,
      operation: job.name,
      attempt: job.attemptsMade,
      final,
      err: error,
      ms,
    },
    final ? 'job failed' : 'job attempt failed; will retry',
  );
  if (!final) return;
  deps.metrics.jobDuration.observe({ operation: job.name, outcome: 'failed' }, ms / 1000);
  if (!data.merchantId) return;
  // A part that fails for good fails its parent inside Redis (failParentOnFailure), where no worker
  // sees it happen: the part records the merchant's job as failed in the audit table itself.
  const isPart = !isMerchantJob(job);
  const partData = job.data as { rootJobId?: string; operation?: string };
  if (isPart && !partData.rootJobId) return;
  await recordJobsFinished(deps.db, [
    {
      id: isPart ? (partData.rootJobId as string) : (job.id as string),
      merchantId: data.merchantId,
      operation: isPart ? (partData.operation ?? job.name) : (jobCatalogue[job.name as JobName]?.operation ?? job.name),
      requestId: data.requestId,
      createdAt: new Date(job.timestamp),
      startedAt: new Date(job.processedOn ?? job.timestamp),
      finishedAt: new Date(job.finishedOn ?? Date.now()),
      state: 'failed',
      counts: {},
      error: isPart ? `part ${job.id} failed: ${error.message}` : error.message,
    },
  ]).catch((writeError: unknown) =>
    deps.logger.error({ err: writeError, jobId: job.id }, 'could not record job failure'),
  );
}
