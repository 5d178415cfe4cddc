import type { CancelResult, JobPayload } from '../../../shared/jobs/job-catalogue.js';
import { announceEnd, type JobEnd } from '../../../shared/jobs/job-end.js';
import type { WorkerDeps } from '../../worker-context.js';
import { keepAuditRows, logCompleted, logMemberEnd, observeDuration } from './sinks.js';

type BatchMember = Pick<JobPayload<'cancelBatch'>['requests'][number], 'jobId' | 'requestId'>;

/**
 * How one single cancel of a batch ended, decided by the batch processor (cancel-batch.processor.ts):
 * aborted when its abort mark was found as the batch was taken (take-batch.ts reads the marks once, in
 * the step that takes the batch), else as its write came back.
 */
export type MemberEnd =
  | { member: BatchMember; state: 'completed'; counts: CancelResult }
  | { member: BatchMember; state: 'failed'; error: Error }
  | { member: BatchMember; state: 'cancelled' };

/**
 * The ends of single cancels run in one batch, each a job of the merchant's own, through the same sinks
 * as any job's end (job-ends.ts): metric, log line, audit row, webhook event. A completed one's audit row
 * was committed in the statement that cancelled its reward (single-cancel-coalescer.ts: the row says
 * `completed` exactly when the reward change has committed), so its audit sink has already run; the
 * failed and aborted ones are recorded here through the outbox, in one write. The batch's own end (its
 * metric, its identifiers dropped) is its BullMQ job's, in job-ends.ts.
 */
export async function membersFinished(
  deps: WorkerDeps,
  batch: { merchantId: string; createdAt: Date; startedAt: Date; finishedAt: number },
  members: readonly MemberEnd[],
): Promise<void> {
  const ms = batch.finishedAt - batch.startedAt.getTime();
  const ends = members.map((end) => ({ decided: end, end: memberEnd(batch, end) }));
  const announced: Promise<void>[] = [];
  try {
    for (const { decided, end } of ends) {
      if (decided.state !== 'completed') continue;
      observeDuration(deps, 'cancel', 'completed', ms);
      const { jobId, merchantId, requestId } = end;
      logCompleted(deps, 'info', { jobId, merchantId, requestId, operation: 'cancel', counts: decided.counts, ms });
      announced.push(announceEnd(deps.webhooks, end));
    }
    // The failed ones first, then the aborted ones: one outbox write for both.
    const recorded = [
      ...ends.filter(({ decided }) => decided.state === 'failed'),
      ...ends.filter(({ decided }) => decided.state === 'cancelled'),
    ];
    await keepAuditRows(
      deps,
      recorded.map(({ end }) => end),
    );
    for (const { decided, end } of recorded) {
      observeDuration(deps, 'cancel', end.state, ms);
      logMemberEnd(deps, end, decided.state === 'failed' ? decided.error : undefined);
      announced.push(announceEnd(deps.webhooks, end));
    }
  } finally {
    // Queued side by side; never throws (a webhook failure is logged by the notifier).
    await Promise.all(announced);
  }
}

function memberEnd(
  batch: { merchantId: string; createdAt: Date; startedAt: Date; finishedAt: number },
  decided: MemberEnd,
): JobEnd {
  return {
    jobId: decided.member.jobId,
    merchantId: batch.merchantId,
    operation: 'cancel',
    requestId: decided.member.requestId,
    state: decided.state,
    createdAt: batch.createdAt.getTime(),
    startedAt: batch.startedAt.getTime(),
    finishedAt: batch.finishedAt,
    progress: decided.state === 'failed' ? 0 : 100,
    result: decided.state === 'completed' ? { ...decided.counts } : null,
    error: decided.state === 'failed' ? decided.error.message : null,
  };
}
