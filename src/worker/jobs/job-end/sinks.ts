import type { Job } from 'bullmq';
import { auditRow, type JobEnd } from '../../../shared/jobs/job-end.js';
import type { WorkerDeps } from '../../worker-context.js';

/**
 * Where a decided end goes, one small function each. None decides anything: each takes the end as
 * job-ends.ts (a BullMQ job) or member-ends.ts (a single cancel of a batch) decided it. The audit row
 * written at once and the webhook event are shared with the abort route (src/shared/jobs/job-end.ts);
 * the listing is listing.ts.
 */

/** Audit sink through the outbox: an end that must not be lost to a Postgres outage (a failure, an abort). */
export async function keepAuditRows(deps: Pick<WorkerDeps, 'outbox'>, ends: readonly JobEnd[]): Promise<void> {
  if (ends.length > 0) await deps.outbox.record(ends.map(auditRow));
}

/** Duration sink: `operation` is the BullMQ job's name for a run, `cancel` for a single cancel. */
export function observeDuration(
  deps: Pick<WorkerDeps, 'metrics'>,
  operation: string,
  state: JobEnd['state'],
  ms: number,
): void {
  deps.metrics.jobDuration.observe({ operation, outcome: state }, ms / 1000);
}

/** Log sink for a merchant's job that ran to its end (or stopped on an abort) and for a part or batch that did. */
export function logCompleted(
  deps: Pick<WorkerDeps, 'logger'>,
  level: 'info' | 'debug',
  line: { jobId: string; merchantId?: string; requestId?: string; operation: string; counts: unknown; ms: number },
): void {
  deps.logger[level](line, 'job completed');
}

/** Log sink for a single cancel of a batch that failed or was aborted (a BullMQ job's failure is logged per attempt). */
export function logMemberEnd(deps: Pick<WorkerDeps, 'logger'>, end: JobEnd, error?: Error): void {
  const line = { jobId: end.jobId, merchantId: end.merchantId, requestId: end.requestId, operation: end.operation };
  if (end.state === 'failed') deps.logger.error({ ...line, err: error }, 'job failed');
  else deps.logger.info(line, 'job aborted');
}

/** Turn sink: the merchant's job is done, its place under the merchant's cap is free again. */
export async function releaseTurn(deps: Pick<WorkerDeps, 'turns'>, merchantId: string, jobId: string): Promise<void> {
  await deps.turns.finished(merchantId, jobId).catch(() => {
    // Redis away: a full cap prunes the entries of finished jobs (merchant-turns.ts `prune`).
  });
}

/**
 * Identifiers sink: a finished job keeps nothing in Redis that grows with its size: its identifiers
 * (up to 10,000 ids, or a part's slice) are dropped from its data, which keeps only who asked, the split
 * marker and the last checkpoint (a few numbers). Its counts live on in its return value and in Postgres.
 * (Such a job cannot be run again from the dashboard: the identifiers are gone; the merchant sends the
 * request again.)
 */
export async function dropIdentifiers(job: Job): Promise<void> {
  const { merchantId, requestId, acceptedAt, rootJobId, operation, step, cursor } = job.data as Record<string, unknown>;
  await job.updateData({ merchantId, requestId, acceptedAt, rootJobId, operation, step, cursor }).catch(() => {
    // Already removed (retention), or Redis away: nothing more to free.
  });
}
