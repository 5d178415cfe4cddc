import { AppError } from '../../shared/errors/errors.js';
import { requestAbort } from '../../shared/jobs/job-abort.js';
import { announceEnd, type JobEnd, recordEnds } from '../../shared/jobs/job-end.js';
import type { JobStatus, PublicJobStatus } from '../../shared/jobs/job-status-schema.js';
import { isFinished, toPublicStatus } from '../../shared/jobs/public-status.js';
import type { ApiDeps } from '../context.js';
import type { RequestLog } from '../http/request-logger.js';
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
  // A job that never reached a worker is finished here, a running one by the worker that stops it
  // (src/worker/jobs/job-end/). Its audit row first: once the job has left Redis, the row is its only record.
  const end = status.state === 'queued' ? withdrawnEnd(status) : null;
  if (end) await recordEnds(deps.db, [end]);
  // True when the removal took it (a job a worker took meanwhile is announced by that worker as it stops).
  const withdrawn = end !== null && (await producer.withdraw(status.operation, merchantId, jobId));
  const again = await findJobStatus(
    redis,
    shards,
    primaryJobRecords(deps.db),
    jobId,
    deps.config.RETENTION_MS,
    merchantId,
  );
  const after = toPublicStatus(again ?? status);
  // Its webhook event carries the status answered here.
  if (withdrawn && end) await announceEnd(deps.webhooks, end, after);
  // Streams of this job on every API process read it again (a withdrawn single cancel has no queue event).
  await deps.jobEvents
    .announceAborted(jobId, status.operation)
    .catch((error: unknown) => logger.warn({ err: error }, 'job event streams not told of the abort'));
  return after;
}

/** A queued job the merchant aborted, decided `cancelled` by this route: it never started, nothing applied. */
function withdrawnEnd(job: Pick<JobStatus, 'jobId' | 'merchantId' | 'operation' | 'createdAt'>): JobEnd {
  const now = Date.now();
  return {
    jobId: job.jobId,
    merchantId: job.merchantId,
    operation: job.operation,
    state: 'cancelled',
    createdAt: job.createdAt,
    startedAt: now,
    finishedAt: now,
    progress: 0,
    result: {},
    error: null,
  };
}
