import type { Job } from 'bullmq';
import { bulkCancelJobSchema, type CancelResult } from '../../shared/queue/job-catalogue.js';
import { cancelByIdentifiers } from '../cancel-by-identifiers.js';
import { chunk, fanOut, type PartPayload, sumCounts } from '../fan-out.js';
import { markBulkJobCompleted, markBulkJobStarted } from '../job-lifecycle.js';
import type { WorkerDeps } from '../worker-context.js';

const COUNT_KEYS = ['requested', 'cancelled', 'alreadyCancelled', 'notCancellable', 'notFound'] as const;

/** bulkCancel: inline for small lists, split into parts above FANOUT_THRESHOLD identifiers. */
export function createBulkCancelProcessor(deps: WorkerDeps) {
  return async (job: Job, token?: string): Promise<CancelResult> => {
    const payload = bulkCancelJobSchema.parse(job.data);
    const jobId = job.id as string;
    if (payload.step === undefined) await markBulkJobStarted(deps, job, payload.merchantId, payload.requestId);

    const identifiers = payload.ids.length + payload.externalIds.length;
    // Both lists may name one reward; external-id batches skip rewards named by id, so it counts once.
    const excludeIds = payload.externalIds.length > 0 ? payload.ids : [];
    let result: CancelResult;
    if (identifiers > deps.config.FANOUT_THRESHOLD) {
      const size = deps.config.FANOUT_CHUNK_SIZE;
      const parts = (): PartPayload[] => [
        ...chunk(payload.ids, size).map((ids) => ({
          operation: 'bulkCancel' as const,
          merchantId: payload.merchantId,
          rootJobId: jobId,
          ids,
          externalIds: [],
        })),
        ...chunk(payload.externalIds, size).map((externalIds) => ({
          operation: 'bulkCancel' as const,
          merchantId: payload.merchantId,
          rootJobId: jobId,
          ids: [],
          externalIds,
          excludeIds,
        })),
      ];
      result = sumCounts(await fanOut<CancelResult>(deps, job, token, parts), COUNT_KEYS);
    } else {
      result = await cancelByIdentifiers(deps, job, token, {
        rootJobId: jobId,
        merchantId: payload.merchantId,
        ids: payload.ids,
        externalIds: payload.externalIds,
        excludeIds,
      });
    }
    await markBulkJobCompleted(deps, job, payload.merchantId, { ...result }, payload.requestId);
    return result;
  };
}
