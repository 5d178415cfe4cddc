import { type Job, WaitingChildrenError } from 'bullmq';
import { type JobPayload, partJobId } from '../../shared/jobs/job-catalogue.js';
import { queueNames } from '../../shared/redis/redis-keys.js';
import { annotateActiveSpan } from '../../shared/telemetry/trace-context.js';
import { abortRequested } from '../jobs/stop-checks.js';
import type { WorkerDeps } from '../worker-context.js';

export type PartPayload = JobPayload<'bulkCancelPart'>;

/** What a split job keeps after its children are added: who asked, and what it must add to their sums. */
export interface SplitMemory {
  /** Identifiers the parts do not see but the result counts (see bulk-cancel.processor.ts). */
  overlap?: number;
}

/**
 * Splits a large bulk job into child jobs (a BullMQ flow: the merchant's job is the parent) so that
 * every worker replica takes a share. Children have ids derived from the parent, so a parent that
 * crashes after adding them and runs again adds nothing new. Each child gets its own fair turn among
 * the merchants' bulk work, so a split job's parts interleave with other merchants' jobs instead of
 * running as one block. Each child carries its own slice and nothing more; once they are added the
 * parent drops its identifiers (Redis holds each identifier once). The parent waits in
 * `waiting-children`; when the last child completes it runs once more and sums their results.
 * A child that fails for good fails the parent (failParentOnFailure).
 *
 * Returns the children's results (and what the parent remembered) once they are all done; throws
 * WaitingChildrenError (BullMQ's signal to park the parent) while they are not.
 */
export async function fanOut<Result>(
  deps: WorkerDeps,
  job: Job,
  token: string | undefined,
  split: () => Promise<{ parts: PartPayload[]; memory: SplitMemory }>,
): Promise<{ results: Result[]; memory: SplitMemory }> {
  if (!token) throw new Error('fan-out needs the job lock token');
  const data = job.data as {
    merchantId: string;
    requestId?: string;
    acceptedAt?: number;
    step?: string;
  } & SplitMemory;
  let memory: SplitMemory = { overlap: data.overlap };
  if (data.step !== 'children-added') {
    // Aborted before it was split: nothing to share out.
    if (await abortRequested(deps, job.id as string)) return { results: [], memory };
    const { parts, memory: remembered } = await split();
    memory = remembered;
    const ids = parts.map((_, index) => partJobId(job.id as string, index));
    const turns = await deps.turns.takeTurns(data.merchantId, ids);
    // The parts go to their parent's shard (their ids start with its id, so they name the same shard).
    // BullMQ's span of this add is a child of this job's span, and each part's run a child of it.
    await deps.queues.forJob(job.id as string).queues[queueNames.bulk].addBulk(
      parts.map((part, index) => ({
        name: 'bulkCancelPart',
        data: part,
        opts: {
          jobId: ids[index],
          priority: turns[index],
          parent: { id: job.id as string, queue: job.queueQualifiedName },
          failParentOnFailure: true,
        },
      })),
    );
    await job.updateData({
      merchantId: data.merchantId,
      requestId: data.requestId,
      acceptedAt: data.acceptedAt,
      step: 'children-added',
      ...memory,
    });
    deps.logger.info({ jobId: job.id, operation: job.name, parts: parts.length }, 'job split into parts');
    annotateActiveSpan({ 'job.parts': parts.length });
  }
  if (await job.moveToWaitingChildren(token)) {
    throw new WaitingChildrenError();
  }
  const values = await job.getChildrenValues<Result>();
  return { results: Object.values(values), memory };
}

/** Adds up the children's counts, key by key. */
export function sumCounts<K extends string>(
  results: readonly Partial<Record<K, number>>[],
  keys: readonly K[],
): Record<K, number> {
  const total = Object.fromEntries(keys.map((key) => [key, 0])) as Record<K, number>;
  for (const result of results) {
    for (const key of keys) total[key] += result[key] ?? 0;
  }
  return total;
}
