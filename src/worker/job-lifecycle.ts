import { DelayedError, type Job } from 'bullmq';
import { recordJobsFinished, recordJobsStarted } from '../shared/repositories/cancellation-jobs.repository.js';
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

export async function markBulkJobCompleted(
  deps: WorkerDeps,
  job: Job,
  merchantId: string,
  counts: Record<string, number>,
  requestId?: string,
): Promise<void> {
  await recordJobsFinished(deps.db, [
    {
      id: job.id as string,
      merchantId,
      operation: job.name,
      requestId,
      createdAt: new Date(job.timestamp),
      startedAt: new Date(job.processedOn ?? Date.now()),
      finishedAt: new Date(),
      state: 'completed',
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
