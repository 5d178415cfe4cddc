import type { Job } from 'bullmq';
import { recordJobsStarted } from '../../../shared/jobs/cancellation-jobs.repository.js';
import { queueNames } from '../../../shared/redis/redis-keys.js';
import type { WorkerDeps } from '../../worker-context.js';

/** A bulk item (a merchant's job or a part) was taken by a worker: it no longer waits for its turn. */
export async function taken(deps: Pick<WorkerDeps, 'turns'>, job: Job): Promise<void> {
  const merchantId = (job.data as { merchantId?: unknown }).merchantId;
  if (job.queueName === queueNames.bulk && typeof merchantId === 'string') {
    await deps.turns.started(merchantId, job.id as string);
  }
}

/**
 * Marks a merchant's bulk job as running (audit row) and lets identical requests that arrive from
 * now on get a job of their own: the deduplication key only joins requests while a job still waits.
 * A running query job may already have passed a player whose reward is assigned after it started.
 * Called by the processors on a job's first run (they know from its payload whether it is one).
 */
export async function started(deps: Pick<WorkerDeps, 'db'>, job: Job, merchantId: string, requestId?: string) {
  await Promise.all([
    recordJobsStarted(
      deps.db,
      [{ id: job.id as string, merchantId, operation: job.name, requestId, createdAt: new Date(job.timestamp) }],
      new Date(job.processedOn ?? Date.now()),
    ),
    job.deduplicationId ? job.removeDeduplicationKey() : Promise.resolve(false),
  ]);
}
