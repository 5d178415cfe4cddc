import type { Job } from 'bullmq';
import type { CancelResult } from '../../shared/jobs/job-catalogue.js';
import { inSpan } from '../../shared/telemetry/trace-context.js';
import { abortRequested, yieldIfStopping } from '../jobs/stop-checks.js';
import type { WorkerDeps } from '../worker-context.js';
import { chunk } from './chunk.js';
import { cancelRewardsByIdentifiers } from './identifier-cancellations.repository.js';

export interface IdentifierWork {
  /** The merchant's job id, recorded on each reward it cancels. */
  rootJobId: string;
  merchantId: string;
  ids: readonly string[];
  externalIds: readonly string[];
  /** Rewards named by id elsewhere in the same request: skipped by external-id batches. */
  excludeIds: readonly string[];
}

/**
 * Cancels by ids and external ids in transactions of at most CANCEL_BATCH_SIZE identifiers, each
 * committing on its own. Batches are idempotent (see the repository), so a retry simply runs them
 * all again and reports the same counts; progress is reported as batches commit.
 */
export async function cancelByIdentifiers(
  deps: WorkerDeps,
  job: Job,
  token: string | undefined,
  work: IdentifierWork,
): Promise<CancelResult> {
  const batchSize = deps.config.CANCEL_BATCH_SIZE;
  const batches = [
    ...chunk(work.ids, batchSize).map((ids) => ({ ids, externalIds: [] as readonly string[], excludeIds: [] })),
    ...chunk(work.externalIds, batchSize).map((externalIds) => ({
      ids: [] as readonly string[],
      externalIds,
      excludeIds: work.excludeIds,
    })),
  ];
  const total: CancelResult = {
    requested: work.ids.length + work.externalIds.length,
    cancelled: 0,
    alreadyCancelled: 0,
    notCancellable: 0,
    notFound: 0,
  };
  let done = 0;
  for (const batch of batches) {
    await yieldIfStopping(deps, job, token);
    // Aborted by the merchant: stop before the next batch; what was applied stays and is counted.
    if (await abortRequested(deps, work.rootJobId)) break;
    const size = batch.ids.length + batch.externalIds.length;
    const result = await inSpan('cancel batch', { attributes: { 'batch.identifiers': size } }, async (span) => {
      const counts = await deps.db
        .transaction()
        .execute((trx) =>
          cancelRewardsByIdentifiers(trx, { jobId: work.rootJobId, merchantId: work.merchantId, ...batch }),
        );
      span.setAttribute('batch.cancelled', counts.cancelled);
      return counts;
    });
    total.cancelled += result.cancelled;
    total.alreadyCancelled += result.alreadyCancelled;
    total.notCancellable += result.notCancellable;
    total.notFound += result.notFound;
    done += size;
    deps.metrics.batchSize.observe({ operation: 'bulkCancel' }, size);
    if (result.cancelled > 0) deps.metrics.rewardsCancelled.inc({ operation: 'bulkCancel' }, result.cancelled);
    await job.updateProgress(Math.floor((done / Math.max(total.requested, 1)) * 100));
  }
  return total;
}
