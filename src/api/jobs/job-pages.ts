import { AppError, RETRY_SOON_SECONDS } from '../../shared/errors/errors.js';
import { hasDeferredSlices, listJobRewards } from '../../shared/jobs/job-rewards.repository.js';
import type { ApiDeps } from '../context.js';
import { readJobListingPage } from './job-listing-page.js';
import { listUnappliedIdentifiers, type UnappliedCursor } from './job-unapplied.repository.js';

/**
 * The pages of what a job did, for the signed API (jobs/rewards, jobs/unapplied) and the portal alike:
 * the rewards it cancelled, and the identifiers of a bulkCancel it did not cancel with why.
 */

export const JOB_PAGE_MAX = 10_000;
export const JOB_PAGE_DEFAULT = 1_000;

/** A page of the rewards the job cancelled, in id order; 409 while a by-query job's are being listed. */
export function jobRewardsPage(
  deps: ApiDeps,
  merchantId: string,
  query: { jobId: string; after?: string; limit?: number },
) {
  return readJobListingPage(deps, merchantId, query.jobId, 'jobRewards', async (db, job) => {
    // Read only: the worker lists a by-query job's slices; a page before that would miss rewards.
    if (await hasDeferredSlices(db, job)) {
      throw new AppError('CONFLICT', "The job's rewards are still being listed", {
        retryAfterSeconds: RETRY_SOON_SECONDS,
      });
    }
    return listJobRewards(db, { ...job, after: query.after?.toLowerCase(), limit: query.limit ?? JOB_PAGE_DEFAULT });
  });
}

/** A page of the identifiers a bulkCancel did not cancel, ordered by kind then identifier. */
export function jobUnappliedPage(
  deps: ApiDeps,
  merchantId: string,
  query: { jobId: string; after?: UnappliedCursor; limit?: number },
) {
  return readJobListingPage(deps, merchantId, query.jobId, 'jobUnapplied', (db, job) =>
    listUnappliedIdentifiers(db, { ...job, after: query.after, limit: query.limit ?? JOB_PAGE_DEFAULT }),
  );
}
