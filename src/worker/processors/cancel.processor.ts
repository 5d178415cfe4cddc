import type { Job } from 'bullmq';
import { type CancelResult, cancelJobSchema } from '../../shared/queue/job-catalogue.js';
import type { RewardOutcome } from '../../shared/repositories/reward-cancellations.repository.js';
import type { Coalescer } from '../single-cancels/cancel-coalescer.js';
import { type SingleCancel, toResult } from '../single-cancels/single-cancel-coalescer.js';

export function createCancelProcessor(coalescer: Coalescer<SingleCancel, RewardOutcome>) {
  return async (job: Job): Promise<CancelResult> => {
    const payload = cancelJobSchema.parse(job.data);
    const outcome = await coalescer.submit({
      jobId: job.id as string,
      merchantId: payload.merchantId,
      rewardId: payload.id,
      externalId: payload.externalId,
      requestId: payload.requestId,
      createdAt: new Date(job.timestamp),
      startedAt: new Date(job.processedOn ?? Date.now()),
    });
    return toResult(outcome);
  };
}
