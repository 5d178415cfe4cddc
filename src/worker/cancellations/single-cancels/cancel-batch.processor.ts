import type { Job } from 'bullmq';
import type { BatchMember } from '../../../shared/cancellations/member-ids.js';
import { outcomeCounts } from '../../../shared/cancellations/outcome-counts.js';
import { isTransientDatabaseError } from '../../../shared/db/database-errors.js';
import { cancelledJobIds } from '../../../shared/jobs/cancellation-jobs.repository.js';
import { cancelBatchJobSchema } from '../../../shared/jobs/job-catalogue.js';
import { keyLifetimes, WITHDRAWN } from '../../../shared/redis/redis-keys.js';
import { type MemberEnd, membersFinished } from '../../jobs/job-end/member-ends.js';
import type { WorkerDeps } from '../../worker-context.js';
import type { RewardOutcome } from '../reward-cancellations.repository.js';
import type { Coalescer } from './cancel-coalescer.js';
import type { SingleCancel } from './single-cancel-coalescer.js';
import { takeBatch } from './take-batch.js';

/** What the queue job itself returns: how its requests ended (each request's own counts are its job's). */
export interface CancelBatchResult {
  requests: number;
  completed: number;
  cancelled: number;
  failed: number;
}

/**
 * Runs a batch of single cancels (src/api/cancellations/single-cancel-batcher.ts stores them). Each request is a job of the merchant's
 * own: it is applied through the coalescer like any single cancel (its audit row committed with its
 * reward), then ends on its own (job-end/member-ends.ts: logged, counted and announced to the merchant's webhook).
 *
 * Before anything is applied, the requests the merchant aborted are set aside: one the API withdrew
 * while the batch waited is skipped silently (the API recorded and announced it); one aborted after the
 * batch was taken is recorded `cancelled` with nothing applied, here (on the batch's first run; see below).
 *
 * A database outage or deadlock in any request puts the whole batch back in the queue (workers.ts):
 * requests that had committed are applied again with the same outcome (their reward carries their job
 * id), so every count stays exact. A request the database refuses on its own fails alone, at once.
 */
export function createCancelBatchProcessor(deps: WorkerDeps, coalescer: Coalescer<SingleCancel, RewardOutcome>) {
  return async (job: Job): Promise<CancelBatchResult> => {
    const { merchantId, requests } = cancelBatchJobSchema.parse(job.data);
    // The batch, its members' abort marks and dedup keys are all under the batch's shard prefix.
    const prefix = deps.shards.jobPrefix(job.id as string);
    const createdAt = new Date(job.timestamp);
    const startedAt = new Date(job.processedOn ?? Date.now());
    const marks = await takeBatch(deps.redis, prefix, merchantId, requests);
    // Withdrawn marks live only the deduplication window (redis-keys.ts). A batch taken later than that
    // (a backlog, a Postgres outage) may hold members whose mark has expired: the API withdrew those after
    // writing their audit row `cancelled`, which is looked up instead (one query, only for such batches).
    if (Date.now() - job.timestamp > keyLifetimes.withdrawnMarkMs) {
      const unmarked = requests.filter((_, index) => !marks[index]).map((request) => request.jobId);
      const withdrawnEarlier = await cancelledJobIds(deps.db, merchantId, unmarked);
      requests.forEach((request, index) => {
        if (withdrawnEarlier.has(request.jobId)) marks[index] = WITHDRAWN;
      });
    }
    // A member aborted after its batch was taken is skipped on the batch's first run (nothing of it was
    // applied). On a later run (after an outage, or a worker that died) an earlier run may have committed it,
    // so it is applied like the rest, with the same outcome if it had: it was in flight when the abort came.
    const firstRun = job.attemptsStarted <= 1;
    const toApply: BatchMember[] = [];
    const aborted: BatchMember[] = [];
    requests.forEach((request, index) => {
      const mark = marks[index];
      if (mark === WITHDRAWN) return;
      (mark && firstRun ? aborted : toApply).push(request);
    });

    const settled = await Promise.allSettled(
      toApply.map((request) =>
        coalescer.submit({
          jobId: request.jobId,
          merchantId,
          rewardId: request.id,
          externalId: request.externalId,
          requestId: request.requestId,
          traceparent: request.traceparent,
          createdAt,
          startedAt,
        }),
      ),
    );
    const outage = settled.find(
      (outcome): outcome is PromiseRejectedResult =>
        outcome.status === 'rejected' && isTransientDatabaseError(outcome.reason),
    );
    if (outage) throw outage.reason;

    const result: CancelBatchResult = { requests: requests.length, completed: 0, cancelled: 0, failed: 0 };
    const ends: MemberEnd[] = [];
    settled.forEach((outcome, index) => {
      const member = toApply[index] as BatchMember;
      if (outcome.status === 'fulfilled') {
        result.completed += 1;
        ends.push({ member, state: 'completed', counts: outcomeCounts(outcome.value) });
        return;
      }
      result.failed += 1;
      const error = outcome.reason instanceof Error ? outcome.reason : new Error(String(outcome.reason));
      ends.push({ member, state: 'failed', error });
    });
    for (const member of aborted) {
      result.cancelled += 1;
      ends.push({ member, state: 'cancelled' });
    }
    await membersFinished(deps, { merchantId, createdAt, startedAt, finishedAt: Date.now() }, ends);
    return result;
  };
}
