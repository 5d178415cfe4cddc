import type { Job } from 'bullmq';
import { bulkCancelByQueryJobSchema, type QueryCancelResult } from '../../shared/jobs/job-catalogue.js';
import { started } from '../jobs/job-end/job-start.js';
import type { WorkerDeps } from '../worker-context.js';
import { cancelByQuery } from './cancel-by-query.js';
import { chunk } from './chunk.js';
import { fanOut, type PartPayload, sumCounts } from './fan-out.js';

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
    // Its rewards are listed as the job ends (job-end/listing.ts).
    return result;
  };
}
