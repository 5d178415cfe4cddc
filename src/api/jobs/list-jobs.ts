import type { Operation } from '../../shared/db/schema.js';
import type { PublicJobStatus } from '../../shared/jobs/job-status-schema.js';
import { toPublicStatus } from '../../shared/jobs/public-status.js';
import type { ApiDeps } from '../context.js';
import { statusFromRow } from './job-status.js';
import { listMerchantJobs } from './merchant-jobs.repository.js';

export const LIST_JOBS_MAX_PAGE = 1_000;
export const LIST_JOBS_DEFAULT_PAGE = 100;
/** The states a listed job can be in: a job is listed from the moment a worker takes it. */
export const listedStates = ['running', 'completed', 'failed', 'cancelling', 'cancelled'] as const;

export interface JobsFilter {
  states?: (typeof listedStates)[number][];
  operations?: Operation[];
  /** The previous page's `next`. */
  after?: string;
  limit?: number;
}

/**
 * One page of the merchant's jobs, newest first (by creation, then id), for the signed API (jobs/list)
 * and the portal alike: jobs finished more than the retention ago are left out.
 */
export async function listJobsPage(
  deps: Pick<ApiDeps, 'db' | 'config'>,
  merchantId: string,
  filter: JobsFilter,
): Promise<{ jobs: PublicJobStatus[]; next: string | null }> {
  const limit = filter.limit ?? LIST_JOBS_DEFAULT_PAGE;
  const rows = await listMerchantJobs(deps.db, {
    merchantId,
    states: filter.states,
    operations: filter.operations,
    after: filter.after?.toLowerCase(),
    finishedAfter: new Date(Date.now() - deps.config.RETENTION_MS),
    limit,
  });
  const page = rows.slice(0, limit);
  const next = rows.length > limit ? (page.at(-1)?.id ?? null) : null;
  return { jobs: page.map((row) => toPublicStatus(statusFromRow(row))), next };
}
