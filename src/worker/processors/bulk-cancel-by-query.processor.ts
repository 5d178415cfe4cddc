import type { Job } from 'bullmq';
import { started } from '../../shared/jobs/job-outcome.js';
import { bulkCancelByQueryJobSchema, type QueryCancelResult } from '../../shared/queue/job-catalogue.js';
import { listDeferredSlices } from '../../shared/repositories/job-rewards.repository.js';
import { cancelByQuery } from '../cancel-by-query.js';
import { chunk } from '../chunk.js';
import { LISTED_BEFORE_COMPLETION } from '../deferred-slice-lister.js';
import { fanOut, type PartPayload, sumCounts } from '../fan-out.js';
import type { WorkerDeps } from '../worker-context.js';

/** bulkCancelByQuery: inline for few players, split by players above FANOUT_THRESHOLD. */
export function createBulkCancelByQueryProcessor(deps: WorkerDeps) {
  return async (job: Job, token?: string): Promise<QueryCancelResult> => {
    const payload = bulkCancelByQueryJobSchema.parse(job.data);
    const jobId = job.id as string;
    // A resumed job (cursor saved) or a parent woken by its children was marked when it first started.
    if (payload.step === undefined && payload.cursor === undefined) {
      await started(deps, job, payload.merchantId, payload.requestId);
    }
    const filter = {
      rewardConfigurationId: payload.rewardConfigurationId,
      externalRewardConfigurationId: payload.externalRewardConfigurationId,
    };
    let result: QueryCancelResult;
    // A split job has dropped its players (its parts hold them): the marker decides.
    if (payload.step === 'children-added' || payload.playerIds.length > deps.config.FANOUT_THRESHOLD) {
      const split = async () => ({
        parts: chunk(payload.playerIds, deps.config.FANOUT_CHUNK_SIZE).map(
          (playerIds): PartPayload => ({
            operation: 'bulkCancelByQuery',
            merchantId: payload.merchantId,
            rootJobId: jobId,
            playerIds,
            ...filter,
          }),
        ),
        memory: {},
      });
      const { results } = await fanOut<QueryCancelResult>(deps, job, token, split);
      result = sumCounts(results, ['players', 'cancelled']);
    } else {
      result = await cancelByQuery(deps, job, token, {
        rootJobId: jobId,
        merchantId: payload.merchantId,
        playerIds: payload.playerIds,
        filter,
        cursor: payload.cursor,
      });
    }
    // The job's last step: a small job's rewards are listed before it is reported completed; a large
    // one's by the lister once it has completed (deferred-slice-lister.ts), off the measured path.
    if (result.cancelled <= LISTED_BEFORE_COMPLETION) {
      await listDeferredSlices(deps.db, { merchantId: payload.merchantId, jobId }, { skipLocked: false });
    }
    return result;
  };
}
