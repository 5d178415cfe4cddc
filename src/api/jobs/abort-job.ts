import { AppError } from '../../shared/errors.js';
import type { PublicJobStatus } from '../../shared/job-status-schema.js';
import { withdraw, withdrawnAnnounced } from '../../shared/jobs/job-outcome.js';
import { isFinished, toPublicStatus } from '../../shared/jobs/public-status.js';
import { requestAbort } from '../../shared/queue/job-abort.js';
import type { ApiDeps } from '../context.js';
import type { RequestLog } from '../request-logger.js';
import { findJobStatus, primaryJobRecords } from './job-status.js';
import { requireMerchantJob } from './merchant-job.js';

/**
 * Aborts one of the merchant's jobs, for the signed API (jobs/cancel) and the portal alike. A queued
 * job is taken out of its queue and is `cancelled` at once; a running one is marked, and whichever
 * worker runs it stops before its next batch (`cancelling`, then `cancelled`). 404 for a job that is not
 * the merchant's, 409 for one that has already finished. Answers the job after the abort.
 */
export async function abortMerchantJob(
  deps: ApiDeps,
  merchantId: string,
  jobId: string,
  logger: RequestLog,
): Promise<PublicJobStatus> {
  const { redis, shards, producer } = deps;
  const status = await requireMerchantJob(deps, merchantId, jobId, 'primary');
  if (isFinished(status.state)) throw new AppError('CONFLICT', `Job has already finished: ${status.state}`);

  // The mark first: a worker that takes the job from now on stops before its first batch.
  // A job whose worker has just decided its end (completed) between the read above and now is refused.
  if (!(await requestAbort(redis, shards, jobId)))
    throw new AppError('CONFLICT', 'Job has already finished: completed');
  // A job that never reached a worker is finished here (job-outcome.ts), a running one by the worker that stops it.
  const withdrawn =
    status.state === 'queued' &&
    (await withdraw(deps, status, () => producer.withdraw(status.operation, merchantId, jobId)));
  const again = await findJobStatus(
    redis,
    shards,
    primaryJobRecords(deps.db),
    jobId,
    deps.config.RETENTION_MS,
    merchantId,
  );
  const after = toPublicStatus(again ?? status);
  if (withdrawn) await withdrawnAnnounced(deps, merchantId, after);
  // Streams of this job on every API process read it again (a withdrawn single cancel has no queue event).
  await deps.jobEvents
    .announceAborted(jobId, status.operation)
    .catch((error: unknown) => logger.warn({ err: error }, 'job event streams not told of the abort'));
  return after;
}
