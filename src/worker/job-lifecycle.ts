import { DelayedError, type Job } from 'bullmq';
import type { PublicJobStatus } from '../shared/job-status-schema.js';
import { isAbortRequested } from '../shared/queue/job-abort.js';
import { cancelBatchJobSchema, type JobName, jobCatalogue, type Operation } from '../shared/queue/job-catalogue.js';
import {
  finishedJobIds,
  recordJobsFinished,
  recordJobsStarted,
} from '../shared/repositories/cancellation-jobs.repository.js';
import type { WorkerDeps } from './worker-context.js';

/**
 * Marks a merchant's bulk job as running (audit row) and lets identical requests that arrive from
 * now on get a job of their own: the deduplication key only joins requests while a job still waits.
 * A running query job may already have passed a player whose reward is assigned after it started.
 */
export async function markBulkJobStarted(deps: WorkerDeps, job: Job, merchantId: string, requestId?: string) {
  await Promise.all([
    recordJobsStarted(
      deps.db,
      [{ id: job.id as string, merchantId, operation: job.name, requestId, createdAt: new Date(job.timestamp) }],
      new Date(job.processedOn ?? Date.now()),
    ),
    job.deduplicationId ? job.removeDeduplicationKey() : Promise.resolve(false),
  ]);
}

/** Whether the merchant asked to abort this job (or the job this part belongs to). */
export function abortRequested(deps: WorkerDeps, merchantJobId: string): Promise<boolean> {
  return isAbortRequested(deps.redis, deps.config.QUEUE_PREFIX, merchantJobId);
}

/** Records the outcome: `cancelled` when the merchant aborted the job, else `completed`. */
export async function markBulkJobCompleted(
  deps: WorkerDeps,
  job: Job,
  merchantId: string,
  counts: Record<string, number>,
  requestId?: string,
): Promise<void> {
  const state = (await abortRequested(deps, job.id as string)) ? 'cancelled' : 'completed';
  await recordJobsFinished(deps.db, [
    {
      id: job.id as string,
      merchantId,
      operation: job.name,
      requestId,
      createdAt: new Date(job.timestamp),
      startedAt: new Date(job.processedOn ?? Date.now()),
      finishedAt: new Date(),
      state,
      counts,
    },
  ]);
}

/**
 * Between two batches: if the worker is shutting down, hand the job back to the queue (its cursor is
 * already saved) instead of holding it until the end. Another worker, or this one after a restart,
 * resumes it at once; a hand-back does not count as a failed attempt.
 */
export async function yieldIfStopping(deps: WorkerDeps, job: Job, token: string | undefined): Promise<void> {
  if (!deps.stopping.aborted || !token) return;
  await job.moveToDelayed(Date.now(), token);
  throw new DelayedError('worker shutting down: job handed back to the queue');
}

/** A job of the merchant's own (not a part of a split job, nor a batch of single cancels). */
export function isMerchantJob(job: Job): boolean {
  return job.name !== 'bulkCancelPart' && job.name !== 'cancelBatch';
}

/**
 * A failed attempt: logged, and when it was the last one, counted and recorded in the audit table
 * (through the outbox, so an outage cannot lose the row).
 */
export async function recordFailure(deps: WorkerDeps, job: Job, error: Error): Promise<void> {
  const data = job.data as { merchantId?: string; requestId?: string; rootJobId?: string; operation?: string };
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
  if (job.name === 'cancelBatch') return recordBatchFailure(deps, job, error);
  if (!data.merchantId) return;
  // A part that fails for good fails its parent inside Redis (failParentOnFailure), where no worker
  // sees it happen: the part records the merchant's job as failed in the audit table itself.
  const isPart = !isMerchantJob(job);
  if (isPart && !data.rootJobId) return;
  const merchantJobId = isPart ? (data.rootJobId as string) : (job.id as string);
  await deps.outbox
    .record([
      {
        id: merchantJobId,
        merchantId: data.merchantId,
        operation: isPart ? (data.operation ?? job.name) : (jobCatalogue[job.name as JobName]?.operation ?? job.name),
        requestId: data.requestId,
        createdAt: new Date(job.timestamp),
        startedAt: new Date(job.processedOn ?? job.timestamp),
        finishedAt: new Date(job.finishedOn ?? Date.now()),
        state: 'failed',
        counts: {},
        error: isPart ? `part ${job.id} failed: ${error.message}` : error.message,
      },
    ])
    .catch((writeError: unknown) =>
      deps.logger.error({ err: writeError, jobId: job.id }, 'could not record job failure'),
    );
  await deps.turns.finished(data.merchantId, merchantJobId).catch(() => {});
  await forgetIdentifiers(job);
  await deps.webhooks.jobFinished({
    merchantId: data.merchantId,
    type: 'job.failed',
    status: isPart
      ? { ...finishedJobStatus(job, 'failed', null), jobId: merchantJobId, operation: partOperation(data.operation) }
      : finishedJobStatus(job, 'failed', null),
  });
}

/**
 * A batch of single cancels that failed for good (it could not even be read, or every attempt hit an
 * error of the batch's own): every request in it that has not finished otherwise (committed by an
 * earlier attempt, or aborted) is a job of the merchant's that failed.
 */
async function recordBatchFailure(deps: WorkerDeps, job: Job, error: Error): Promise<void> {
  const parsed = cancelBatchJobSchema.safeParse(job.data);
  if (!parsed.success) return;
  const { merchantId } = parsed.data;
  // Postgres away: all are recorded failed through the outbox (a finished row cannot be told apart then).
  const finished = await finishedJobIds(
    deps.db,
    parsed.data.requests.map((request) => request.jobId),
  ).catch(() => new Set<string>());
  const requests = parsed.data.requests.filter((request) => !finished.has(request.jobId));
  const times = {
    createdAt: new Date(job.timestamp),
    startedAt: new Date(job.processedOn ?? job.timestamp),
    finishedAt: new Date(job.finishedOn ?? Date.now()),
  };
  await deps.outbox
    .record(
      requests.map((request) => ({
        id: request.jobId,
        merchantId,
        operation: 'cancel',
        requestId: request.requestId,
        ...times,
        state: 'failed' as const,
        counts: {},
        error: `batch ${job.id} failed: ${error.message}`,
      })),
    )
    .catch((writeError: unknown) =>
      deps.logger.error({ err: writeError, jobId: job.id }, 'could not record job failure'),
    );
  for (const request of requests) {
    await deps.webhooks.jobFinished({
      merchantId,
      type: 'job.failed',
      status: { ...finishedJobStatus(job, 'failed', null), jobId: request.jobId, operation: 'cancel' },
    });
  }
  await forgetIdentifiers(job);
}

function partOperation(operation: string | undefined): Operation {
  return operation === 'bulkCancel' ? 'bulkCancel' : 'bulkCancelByQuery';
}

/**
 * A finished job's status as the merchant sees it, from the job in hand (no Redis read): for the
 * webhook event, sent as the job finishes.
 */
export function finishedJobStatus(
  job: Job,
  state: 'completed' | 'failed' | 'cancelled',
  result: Record<string, number> | null,
): PublicJobStatus {
  return {
    jobId: job.id as string,
    operation: (jobCatalogue[job.name as JobName]?.operation ?? 'bulkCancel') as Operation,
    state,
    createdAt: job.timestamp,
    startedAt: job.processedOn ?? null,
    finishedAt: job.finishedOn ?? Date.now(),
    progress: state === 'completed' ? 100 : typeof job.progress === 'number' ? job.progress : 0,
    result: state === 'failed' ? null : result,
    error: state === 'failed' ? 'request could not be applied' : null,
  };
}

/**
 * A finished job keeps nothing in Redis that grows with its size: its identifiers (up to 10,000 ids,
 * or a part's slice) are dropped from its data, which keeps only who asked, the split marker and the
 * last checkpoint (a few numbers). Its
 * counts live on in its return value and in Postgres. (Such a job cannot be run again from the
 * dashboard: the identifiers are gone; the merchant sends the request again.)
 */
export async function forgetIdentifiers(job: Job): Promise<void> {
  const { merchantId, requestId, acceptedAt, rootJobId, operation, step, cursor } = job.data as Record<string, unknown>;
  await job.updateData({ merchantId, requestId, acceptedAt, rootJobId, operation, step, cursor }).catch(() => {
    // Already removed (retention), or Redis away: nothing more to free.
  });
}
