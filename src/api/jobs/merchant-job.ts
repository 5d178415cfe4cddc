import { AppError } from '../../shared/errors/errors.js';
import type { JobStatus } from '../../shared/jobs/job-status-schema.js';
import type { ApiDeps } from '../context.js';
import { findJobStatus, finishedJobRecords, primaryJobRecords } from './job-status.js';

/**
 * One job of one merchant, or 404: another merchant's job is as unknown as a job that never existed.
 * `primary`: read where writes land (an abort must see the job as it is now); `finished` lets the read
 * router take a finished job's record from a replica.
 */
export async function requireMerchantJob(
  deps: Pick<ApiDeps, 'redis' | 'shards' | 'db' | 'reads' | 'config'>,
  merchantId: string,
  jobId: string,
  source: 'primary' | 'finished' = 'finished',
): Promise<JobStatus> {
  const records = source === 'primary' ? primaryJobRecords(deps.db) : finishedJobRecords(deps.reads);
  const status = await findJobStatus(deps.redis, deps.shards, records, jobId, deps.config.RETENTION_MS, merchantId);
  if (!status || status.merchantId !== merchantId) throw new AppError('NOT_FOUND', 'Job not found');
  return status;
}
