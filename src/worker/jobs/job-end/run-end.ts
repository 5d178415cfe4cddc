import type { Job } from 'bullmq';
import type { Operation } from '../../../shared/db/schema.js';
import { finishedJobIds } from '../../../shared/jobs/cancellation-jobs.repository.js';
import { decideEnd } from '../../../shared/jobs/job-abort.js';
import { cancelBatchJobSchema, type JobName, jobCatalogue } from '../../../shared/jobs/job-catalogue.js';
import type { JobEnd } from '../../../shared/jobs/job-end.js';
import type { WorkerDeps } from '../../worker-context.js';

/**
 * How one BullMQ job ended, decided once (job-ends.ts) and handed as it is to every sink (sinks.ts).
 * A BullMQ job is a merchant's job, a part of one, or a batch of single cancels; `ends` are the
 * merchant's jobs that end with it.
 */
export interface RunEnd {
  job: Job;
  state: JobEnd['state'];
  /** The processor's answer (completed); null when the job failed. */
  result: unknown;
  /**
   * The merchant's jobs this run ends: a merchant's job that ran to its end or stopped on an abort;
   * the merchant's job of a part that failed for good; the requests of a batch that failed for good.
   * Empty for a part or a batch that completed (its merchant's jobs end elsewhere: the parent's run,
   * or each request on its own, member-ends.ts).
   */
  ends: JobEnd[];
}

type JobData = { merchantId?: string; requestId?: string; rootJobId?: string; operation?: string };

/** A job of the merchant's own (not a part of a split job, nor a batch of single cancels). */
export function isMerchantJob(job: Job): boolean {
  return job.name !== 'bulkCancelPart' && job.name !== 'cancelBatch';
}

/**
 * A run whose processor returned: a merchant's job is `cancelled` when the merchant aborted it before
 * now, else `completed`, decided in one step with the abort key (job-abort.ts `decideEnd`): from then on
 * the abort route answers 409. A part or a batch just completed.
 */
export async function decideCompleted(
  deps: Pick<WorkerDeps, 'redis' | 'shards'>,
  job: Job,
  result: unknown,
): Promise<RunEnd> {
  const { merchantId, requestId } = job.data as JobData;
  if (!isMerchantJob(job) || !merchantId) return { job, state: 'completed', result, ends: [] };
  const state = await decideEnd(deps.redis, deps.shards, job.id as string);
  const finishedAt = Date.now();
  const end: JobEnd = {
    ...endOfJob(job, state, { merchantId, requestId, operation: operationOf(job), finishedAt }),
    startedAt: job.processedOn ?? finishedAt,
    result: { ...(result as Record<string, number>) },
  };
  return { job, state, result, ends: [end] };
}

/**
 * A job whose last attempt failed (BullMQ decided that inside Redis: job-ends.ts). A part fails its
 * merchant's job (failParentOnFailure, where no worker sees it): the part ends that job. A batch of
 * single cancels ends each of its requests that has not finished otherwise (committed by an earlier
 * attempt, or aborted); when Postgres is away none can be told apart, and all are failed.
 */
export async function decideFailed(deps: Pick<WorkerDeps, 'db'>, job: Job, error: Error): Promise<RunEnd> {
  const run: RunEnd = { job, state: 'failed', result: null, ends: [] };
  const finishedAt = job.finishedOn ?? Date.now();
  if (job.name === 'cancelBatch') {
    const parsed = cancelBatchJobSchema.safeParse(job.data);
    if (!parsed.success) return run;
    const { merchantId, requests } = parsed.data;
    const ids = requests.map((request) => request.jobId);
    const finished = await finishedJobIds(deps.db, merchantId, ids).catch(() => new Set<string>());
    for (const request of requests) {
      if (finished.has(request.jobId)) continue;
      const as = { jobId: request.jobId, requestId: request.requestId, operation: 'cancel' as const };
      run.ends.push(failedEnd(job, { merchantId, finishedAt, ...as }, `batch ${job.id} failed: ${error.message}`));
    }
    return run;
  }
  const { merchantId, requestId, rootJobId, operation } = job.data as JobData;
  if (!merchantId) return run;
  if (isMerchantJob(job)) {
    run.ends.push(failedEnd(job, { merchantId, requestId, operation: operationOf(job), finishedAt }, error.message));
  } else if (rootJobId) {
    const as = { jobId: rootJobId, requestId, operation: partOperation(operation) };
    run.ends.push(failedEnd(job, { merchantId, finishedAt, ...as }, `part ${job.id} failed: ${error.message}`));
  }
  return run;
}

interface EndOf {
  merchantId: string;
  requestId?: string;
  operation: Operation;
  finishedAt: number;
  /** The merchant's job when the job in hand carried part of it (a part, a batch). */
  jobId?: string;
}

/** A merchant's job's end from the BullMQ job in hand (no Redis read). */
function endOfJob(job: Job, state: JobEnd['state'], of: EndOf): JobEnd {
  return {
    jobId: of.jobId ?? (job.id as string),
    merchantId: of.merchantId,
    operation: of.operation,
    requestId: of.requestId,
    state,
    createdAt: job.timestamp,
    startedAt: job.processedOn ?? null,
    finishedAt: of.finishedAt,
    progress: state === 'completed' ? 100 : typeof job.progress === 'number' ? job.progress : 0,
    result: null,
    error: null,
  };
}

function failedEnd(job: Job, of: EndOf, error: string): JobEnd {
  // The audit row's start: the run's, else when the job was queued.
  return { ...endOfJob(job, 'failed', of), startedAt: job.processedOn ?? job.timestamp, error };
}

function operationOf(job: Job): Operation {
  return (jobCatalogue[job.name as JobName]?.operation ?? 'bulkCancel') as Operation;
}

function partOperation(operation: string | undefined): Operation {
  return operation === 'bulkCancel' ? 'bulkCancel' : 'bulkCancelByQuery';
}
