import type { Job, Queue } from 'bullmq';
import type { Db } from './db/client.js';
import type { CancellationJobRow, JobState } from './db/schema.js';
import { findJobRecord } from './repositories/cancellation-jobs.repository.js';

export interface JobStatus {
  jobId: string;
  merchantId: string;
  operation: string;
  state: JobState;
  /** Epoch milliseconds. */
  createdAt: number;
  startedAt: number | null;
  finishedAt: number | null;
  /** Percent done, 0 to 100. */
  progress: number;
  result: Record<string, number> | null;
  error: string | null;
}

const JOB_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * A job's status: from BullMQ while it holds the job (live progress), else from the
 * `cancellation_jobs` table, which keeps it after Redis has forgotten the job.
 */
export async function findJobStatus(queues: readonly Queue[], db: Db, jobId: string): Promise<JobStatus | null> {
  if (!JOB_ID.test(jobId)) return null;
  for (const queue of queues) {
    // State first, then the job: a job read before it completes would show "completed" without its result.
    const bullState = await queue.getJobState(jobId);
    if (bullState === 'unknown') continue;
    const job = await queue.getJob(jobId);
    if (job) {
      const fromQueue = await statusFromJob(job, bullState);
      if (fromQueue) return fromQueue;
    }
  }
  const row = await findJobRecord(db, jobId);
  return row ? statusFromRow(row) : null;
}

async function statusFromJob(job: Job, bullState: string): Promise<JobStatus | null> {
  const data = job.data as { merchantId?: string };
  if (!job.id || !data.merchantId) return null;
  const state = toJobState(bullState);
  const result = state === 'completed' ? (job.returnvalue as Record<string, number> | null) : null;
  return {
    jobId: job.id,
    merchantId: data.merchantId,
    operation: job.name,
    state,
    createdAt: job.timestamp,
    startedAt: job.processedOn ?? null,
    finishedAt: state === 'completed' || state === 'failed' ? (job.finishedOn ?? null) : null,
    progress: await progressOf(job, bullState),
    result: result ?? null,
    error: job.failedReason || null,
  };
}

/** A split job's progress is the share of its parts done; others report their own as batches commit. */
async function progressOf(job: Job, bullState: string): Promise<number> {
  if (bullState === 'completed') return 100;
  if (bullState === 'waiting-children') {
    const { processed = 0, unprocessed = 0 } = await job.getDependenciesCount({ processed: true, unprocessed: true });
    return processed + unprocessed === 0 ? 0 : Math.floor((processed / (processed + unprocessed)) * 100);
  }
  return typeof job.progress === 'number' ? job.progress : 0;
}

function toJobState(bullState: string): JobState {
  switch (bullState) {
    case 'completed':
      return 'completed';
    case 'failed':
      return 'failed';
    case 'active':
    case 'waiting-children':
      return 'running';
    default:
      // waiting, prioritized, delayed (also a retry waiting for its backoff), unknown.
      return 'queued';
  }
}

function statusFromRow(row: CancellationJobRow): JobStatus {
  const counts: Record<string, number | null> =
    row.operation === 'bulkCancelByQuery'
      ? { players: row.players, cancelled: row.cancelled }
      : {
          requested: row.requested,
          cancelled: row.cancelled,
          alreadyCancelled: row.already_cancelled,
          notCancellable: row.not_cancellable,
          notFound: row.not_found,
        };
  const hasCounts = Object.values(counts).some((value) => value !== null);
  return {
    jobId: row.id,
    merchantId: row.merchant_id,
    operation: row.operation,
    state: row.state,
    createdAt: row.created_at.getTime(),
    startedAt: row.started_at?.getTime() ?? null,
    finishedAt: row.finished_at?.getTime() ?? null,
    progress: row.state === 'completed' ? 100 : 0,
    result: hasCounts
      ? (Object.fromEntries(Object.entries(counts).map(([k, v]) => [k, v ?? 0])) as Record<string, number>)
      : null,
    error: row.error,
  };
}
