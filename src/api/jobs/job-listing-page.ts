import type { Db } from '../../shared/db/client.js';
import { AppError, RETRY_SOON_SECONDS } from '../../shared/errors/errors.js';
import { findJobRecord } from '../../shared/jobs/cancellation-jobs.repository.js';
import { isFinished } from '../../shared/jobs/public-status.js';
import type { ApiDeps } from '../context.js';
import type { ReadKind } from '../reads/read-router.js';
import { requireMerchantJob } from './merchant-job.js';

/** The job a page lists, once it is known to be the asking merchant's. */
export interface ListedJob {
  merchantId: string;
  jobId: string;
}

/**
 * One page of what a job did, for the listing routes (jobs/rewards, jobs/unapplied), with what they share:
 *
 * - the job must be the asking merchant's: another merchant's job is as unknown as one that never existed
 *   (404);
 * - a page reads up to 10,000 rows, so at most a few run at once per merchant (heavy-read-limiter.ts);
 * - a replica serves the page only once it has replayed the job's end, which is recorded after the job's
 *   last rows, so its page is whole; one that has not (the job runs, or the replica is that far behind)
 *   leaves the page to the primary, and with the primary down too the answer is 503.
 *
 * `readPage` reads the page itself from the pool it is given.
 */
export async function readJobListingPage<T>(
  deps: ApiDeps,
  merchantId: string,
  jobId: string,
  kind: ReadKind,
  readPage: (db: Db, job: ListedJob) => Promise<T>,
): Promise<T> {
  const { reads, heavyReads } = deps;
  const status = await requireMerchantJob(deps, merchantId, jobId);
  const job: ListedJob = { merchantId, jobId: status.jobId };
  const page = await heavyReads.run(merchantId, () =>
    reads.read(
      kind,
      async (db, pool): Promise<{ page: T } | undefined> => {
        if (pool === 'replica' && !(await hasFinished(db, job))) return undefined;
        return { page: await readPage(db, job) };
      },
      { accept: (read) => read !== undefined },
    ),
  );
  if (page === undefined)
    throw new AppError('SERVICE_UNAVAILABLE', undefined, { retryAfterSeconds: RETRY_SOON_SECONDS });
  return page.page;
}

/** Whether this pool has the job's end: on a replica, only then are the job's rows whole there. */
export async function hasFinished(db: Db, job: ListedJob): Promise<boolean> {
  const row = await findJobRecord(db, job.merchantId, job.jobId);
  return row !== undefined && isFinished(row.state);
}
