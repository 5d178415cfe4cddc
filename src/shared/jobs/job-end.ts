import type { Db } from '../db/client.js';
import type { Operation } from '../db/schema.js';
import type { WebhookNotifier } from '../webhooks/webhook-notifier.js';
import { type JobOutcome as AuditRow, recordJobsFinished } from './cancellation-jobs.repository.js';
import type { PublicJobStatus } from './job-status-schema.js';
import { toPublicStatus } from './public-status.js';

/**
 * A merchant's job's end, decided once by whoever finished the job: the worker that ran it
 * (src/worker/jobs/job-end/), the batch that held a single cancel (the same folder), or the abort route that
 * took it out of its queue (src/api/jobs/abort-job.ts). Every sink reads the decided end; none reads the
 * abort mark or works out the outcome again, so the audit row, the webhook event, the metric and the log
 * line cannot tell different stories about one job.
 *
 * The two sinks both sides use are here: the audit row and the webhook event.
 */
export interface JobEnd {
  jobId: string;
  merchantId: string;
  operation: Operation;
  requestId?: string;
  state: 'completed' | 'failed' | 'cancelled';
  /** Epoch milliseconds. */
  createdAt: number;
  startedAt: number | null;
  finishedAt: number;
  progress: number;
  /** The job's counts; null when it failed, or stopped before it had any. */
  result: Record<string, number> | null;
  /** Our own error text (audit row, logs, admin view); the merchant is told a generic one (public-status.ts). */
  error: string | null;
}

/** The status the webhook event carries: the job in hand, no Redis read. */
function endStatus(end: JobEnd): PublicJobStatus {
  return toPublicStatus({
    jobId: end.jobId,
    merchantId: end.merchantId,
    operation: end.operation,
    state: end.state,
    createdAt: end.createdAt,
    startedAt: end.startedAt,
    finishedAt: end.finishedAt,
    progress: end.progress,
    result: end.state === 'failed' ? null : end.result,
    error: end.state === 'failed' ? end.error : null,
  });
}

/** The audit row of an end: once a job has left Redis, the row is its only record. */
export function auditRow(end: JobEnd): AuditRow {
  return {
    id: end.jobId,
    merchantId: end.merchantId,
    operation: end.operation,
    requestId: end.requestId,
    createdAt: new Date(end.createdAt),
    startedAt: new Date(end.startedAt ?? end.finishedAt),
    finishedAt: new Date(end.finishedAt),
    state: end.state,
    counts: { ...(end.result ?? {}) },
    ...(end.error === null ? {} : { error: end.error }),
  };
}

/** Audit sink, written at once (it throws when Postgres is away: the caller decides what that means). */
export async function recordEnds(db: Db, ends: readonly JobEnd[]): Promise<void> {
  await recordJobsFinished(db, ends.map(auditRow));
}

/**
 * Webhook sink: the event of the end's state. `status` is the status to carry when the caller has
 * already answered one (the abort route); by default the end's own. Never throws (the notifier logs).
 */
export async function announceEnd(
  webhooks: WebhookNotifier,
  end: JobEnd,
  status: PublicJobStatus = endStatus(end),
): Promise<void> {
  await webhooks.jobFinished({ merchantId: end.merchantId, type: `job.${end.state}`, status });
}
