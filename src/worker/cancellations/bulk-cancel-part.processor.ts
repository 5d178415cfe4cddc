import type { Job } from 'bullmq';
import { bulkCancelPartJobSchema, type JobResult } from '../../shared/jobs/job-catalogue.js';
import type { WorkerDeps } from '../worker-context.js';
import { cancelByIdentifiers } from './cancel-by-identifiers.js';
import { cancelByQuery } from './cancel-by-query.js';

/** A part of a split bulk job: the same batched work, recorded under the merchant's job id. */
export function createBulkCancelPartProcessor(deps: WorkerDeps) {
  return async (job: Job, token?: string): Promise<JobResult> => {
    const part = bulkCancelPartJobSchema.parse(job.data);
    if (part.operation === 'bulkCancel') {
      return cancelByIdentifiers(deps, job, token, {
        rootJobId: part.rootJobId,
        merchantId: part.merchantId,
        ids: part.ids,
        externalIds: part.externalIds,
        excludeIds: part.excludeIds ?? [],
      });
    }
    return cancelByQuery(deps, job, token, {
      rootJobId: part.rootJobId,
      merchantId: part.merchantId,
      playerIds: part.playerIds,
      filter: {
        rewardConfigurationId: part.rewardConfigurationId,
        externalRewardConfigurationId: part.externalRewardConfigurationId,
      },
      cursor: part.cursor,
    });
  };
}
