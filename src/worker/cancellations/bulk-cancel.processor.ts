import type { Job } from 'bullmq';
import { bulkCancelJobSchema, type CancelResult } from '../../shared/jobs/job-catalogue.js';
import { started } from '../jobs/job-end/job-start.js';
import type { WorkerDeps } from '../worker-context.js';
import { cancelByIdentifiers } from './cancel-by-identifiers.js';
import { chunk } from './chunk.js';
import { fanOut, type PartPayload, sumCounts } from './fan-out.js';
import { findExternalIdsNamedById } from './identifier-cancellations.repository.js';

const COUNT_KEYS = ['requested', 'cancelled', 'alreadyCancelled', 'notCancellable', 'notFound'] as const;

/** bulkCancel: inline for small lists, split into parts above FANOUT_THRESHOLD identifiers. */
export function createBulkCancelProcessor(deps: WorkerDeps) {
  return async (job: Job, token?: string): Promise<CancelResult> => {
    const payload = bulkCancelJobSchema.parse(job.data);
    const jobId = job.id as string;
    if (payload.step === undefined) await started(deps, job, payload.merchantId, payload.requestId);

    const identifiers = payload.ids.length + payload.externalIds.length;
    let result: CancelResult;
    // A split job has dropped its identifiers (its parts hold them): the marker decides.
    if (payload.step === 'children-added' || identifiers > deps.config.FANOUT_THRESHOLD) {
      const split = async () => {
        // Both lists may name one reward: its external id is left to the id parts, so it counts once.
        const namedById = new Set(
          await findExternalIdsNamedById(deps.db, {
            merchantId: payload.merchantId,
            ids: payload.ids,
            externalIds: payload.externalIds,
          }),
        );
        const externalIds = payload.externalIds.filter((externalId) => !namedById.has(externalId));
        const size = deps.config.FANOUT_CHUNK_SIZE;
        const base = { operation: 'bulkCancel' as const, merchantId: payload.merchantId, rootJobId: jobId };
        const parts: PartPayload[] = [
          ...chunk(payload.ids, size).map((ids) => ({ ...base, ids, externalIds: [] })),
          ...chunk(externalIds, size).map((slice) => ({ ...base, ids: [], externalIds: slice })),
        ];
        return { parts, memory: { overlap: namedById.size } };
      };
      const { results, memory } = await fanOut<CancelResult>(deps, job, token, split);
      result = sumCounts(results, COUNT_KEYS);
      // The external ids left out found their reward (named by id too): requested, and not "not found".
      result.requested += memory.overlap ?? 0;
    } else {
      result = await cancelByIdentifiers(deps, job, token, {
        rootJobId: jobId,
        merchantId: payload.merchantId,
        ids: payload.ids,
        externalIds: payload.externalIds,
        // Both lists may name one reward; external-id batches skip rewards named by id, so it counts once.
        excludeIds: payload.externalIds.length > 0 ? payload.ids : [],
      });
    }
    return result;
  };
}
