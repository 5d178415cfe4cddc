import { DelayedError, type Job } from 'bullmq';
import { isAbortRequested } from '../../shared/jobs/job-abort.js';
import type { WorkerDeps } from '../worker-context.js';

/**
 * Where a long job checks, between two batches, whether to stop: the merchant aborted it, or the worker
 * is shutting down. (Its start and end are in job-end/.)
 */

/** Whether the merchant asked to abort this job (or the job this part belongs to). */
export function abortRequested(deps: WorkerDeps, merchantJobId: string): Promise<boolean> {
  return isAbortRequested(deps.redis, deps.shards, merchantJobId);
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
