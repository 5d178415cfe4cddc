import { type Job, WaitingChildrenError } from 'bullmq';
import { type JobPayload, partJobId, queueNames } from '../shared/queue/job-catalogue.js';
import type { WorkerDeps } from './worker-context.js';

export type PartPayload = JobPayload<'bulkCancelPart'>;

/**
 * Splits a large bulk job into child jobs (a BullMQ flow: the merchant's job is the parent) so that
 * every worker replica takes a share. Children have ids derived from the parent, so a parent that
 * crashes after adding them and runs again adds nothing new. The parent waits in
 * `waiting-children`; when the last child completes it runs once more and sums their results.
 * A child that fails for good fails the parent (failParentOnFailure).
 *
 * Returns the children's results once they are all done; throws WaitingChildrenError (BullMQ's
 * signal to park the parent) while they are not.
 */
export async function fanOut<Result>(
  deps: WorkerDeps,
  job: Job,
  token: string | undefined,
  parts: () => PartPayload[],
): Promise<Result[]> {
  if (!token) throw new Error('fan-out needs the job lock token');
  if ((job.data as { step?: string }).step !== 'children-added') {
    const payloads = parts();
    const queue = deps.queues[queueNames.bulk];
    await queue.addBulk(
      payloads.map((data, index) => ({
        name: 'bulkCancelPart',
        data,
        opts: {
          jobId: partJobId(job.id as string, index),
          parent: { id: job.id as string, queue: job.queueQualifiedName },
          failParentOnFailure: true,
        },
      })),
    );
    await job.updateData({ ...job.data, step: 'children-added' });
    deps.logger.info({ jobId: job.id, operation: job.name, parts: payloads.length }, 'job split into parts');
  }
  if (await job.moveToWaitingChildren(token)) {
    throw new WaitingChildrenError();
  }
  const values = await job.getChildrenValues<Result>();
  return Object.values(values);
}

export function chunk<T>(items: readonly T[], size: number): T[][] {
  const chunks: T[][] = [];
  for (let start = 0; start < items.length; start += size) chunks.push(items.slice(start, start + size));
  return chunks;
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
