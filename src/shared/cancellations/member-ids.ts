import { deduplicationKey, type JobPayload } from '../jobs/job-catalogue.js';
import { shardJobId } from '../redis/shards.js';

/**
 * The ids of single cancels stored in batches (one queue job per merchant for the requests that
 * arrived together; the API half is api/single-cancels, the worker half worker/single-cancels).
 *
 * A member's id is its batch's id with the last four hex digits set to its place (1 to ffff; the
 * batch's own id ends in 0000), so the batch is found from the member id alone: job status and abort
 * cost O(1) in Redis, with nothing stored per member. SHARE_WAITING (single-cancel-batcher.ts) reads a
 * batch id from a member id the same way, in Lua.
 */

/** One request of a batch: a job of the merchant's own, with its own id. */
export type BatchMember = JobPayload<'cancelBatch'>['requests'][number];

const MEMBER_DIGITS = 4;

/** A new batch id, naming the batch's queue shard (shards.ts) as every member id then does too. */
export function newBatchId(shard: number | null): string {
  return `${shardJobId(shard).slice(0, -MEMBER_DIGITS)}0000`;
}

/** The id of the batch's `index`-th request (from 0). */
export function memberJobId(batchId: string, index: number): string {
  return `${batchId.slice(0, -MEMBER_DIGITS)}${(index + 1).toString(16).padStart(MEMBER_DIGITS, '0')}`;
}

/** The batch a member id belongs to (itself for a batch id, or for any id that is not a member's). */
export function batchIdOf(jobId: string): string {
  return `${jobId.slice(0, -MEMBER_DIGITS)}0000`;
}

/** The id identical single cancels share (the cancel route builds it, a worker taking a batch frees it). */
export function singleCancelDeduplicationKey(
  merchantId: string,
  target: { id?: string | null; externalId?: string | null },
): string {
  return deduplicationKey(
    merchantId,
    'cancel',
    target.id != null ? { id: target.id } : { externalId: target.externalId ?? '' },
  );
}
