import { isTransientDatabaseError } from '../../../shared/db/database-errors.js';
import { inSpan, linksTo } from '../../../shared/telemetry/trace-context.js';
import type { WorkerDeps } from '../../worker-context.js';
import { cancelSingleRewards, type RewardOutcome } from '../reward-cancellations.repository.js';
import { Coalescer } from './cancel-coalescer.js';

export interface SingleCancel {
  jobId: string;
  merchantId: string;
  rewardId?: string;
  externalId?: string;
  requestId?: string;
  /** The request's trace context: the coalesced write links to it. */
  traceparent?: string;
  createdAt: Date;
  startedAt: Date;
}

/**
 * The coalesced write: cancel every waiting reward and record every job's audit row, in one
 * statement, so a job's row says `completed` exactly when its reward change has committed.
 */
export function createSingleCancelCoalescer(deps: WorkerDeps): Coalescer<SingleCancel, RewardOutcome> {
  // One statement serves requests of many traces: a trace of its own, linked to each of them.
  const apply = (requests: SingleCancel[]): Promise<RewardOutcome[]> =>
    inSpan(
      'coalesced cancels',
      { root: true, links: linksTo(requests), attributes: { 'batch.requests': requests.length } },
      () => applyInSpan(requests),
    );
  const applyInSpan = async (requests: SingleCancel[]): Promise<RewardOutcome[]> => {
    const outcomes = await cancelSingleRewards(deps.db, requests);
    deps.metrics.batchSize.observe({ operation: 'cancel' }, requests.length);
    const cancelled = outcomes.filter((outcome) => outcome === 'cancelled').length;
    if (cancelled > 0) deps.metrics.rewardsCancelled.inc({ operation: 'cancel' }, cancelled);
    return outcomes;
  };
  // One request the database refuses must not fail the others it was coalesced with: on such an
  // error the batch is applied again one request at a time, so only the culprit fails.
  const applyIsolatingFailures = async (requests: SingleCancel[]): Promise<Array<RewardOutcome | Error>> => {
    try {
      return await apply(requests);
    } catch (error) {
      if (requests.length === 1 || isTransientDatabaseError(error)) throw error;
      deps.logger.warn({ err: error, batch: requests.length }, 'coalesced cancel refused; applying one by one');
      const results: Array<RewardOutcome | Error> = [];
      for (const request of requests) {
        try {
          results.push(...(await apply([request])));
        } catch (single) {
          results.push(single instanceof Error ? single : new Error(String(single)));
        }
      }
      return results;
    }
  };
  return new Coalescer(applyIsolatingFailures, deps.config.COALESCE_MAX_BATCH, deps.config.COALESCE_WINDOW_MS);
}
