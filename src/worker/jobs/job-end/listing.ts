import { listDeferredSlices } from '../../../shared/jobs/job-rewards.repository.js';
import type { WorkerDeps } from '../../worker-context.js';
import type { DeferredSliceLister } from './deferred-slice-lister.js';
import type { RunEnd } from './run-end.js';

/**
 * A by-query job that cancelled at most this many rewards lists its deferred slices before it is
 * reported completed (a few milliseconds: ~1.4 s per million rewards measured when the API did it,
 * 2026-11-24), so its pages answer at once; a larger job leaves them to the lister once it has
 * completed (deferred-slice-lister.ts), off the measured path.
 */
export const LISTED_BEFORE_COMPLETION = 10_000;

/** The by-query merchant's job this run ends, and how many rewards it cancelled; null for any other run. */
function queryJobOf(run: RunEnd): { merchantId: string; jobId: string; cancelled: number } | null {
  const end = run.ends[0];
  if (run.job.name !== 'bulkCancelByQuery' || run.state === 'failed' || !end) return null;
  return { merchantId: end.merchantId, jobId: end.jobId, cancelled: end.result?.cancelled ?? 0 };
}

/** Listing sink before BullMQ hears of the end: a small by-query job's rewards, listed at once. */
export async function listBeforeCompletion(deps: Pick<WorkerDeps, 'db'>, run: RunEnd): Promise<void> {
  const job = queryJobOf(run);
  if (job && job.cancelled <= LISTED_BEFORE_COMPLETION) {
    await listDeferredSlices(deps.db, { merchantId: job.merchantId, jobId: job.jobId }, { skipLocked: false });
  }
}

/** Listing sink once BullMQ marked the job completed: a large by-query job's rewards, by the lister. */
export function listAfterCompletion(lister: DeferredSliceLister, run: RunEnd): void {
  const job = queryJobOf(run);
  if (job && job.cancelled > LISTED_BEFORE_COMPLETION) lister.list({ merchantId: job.merchantId, jobId: job.jobId });
}
